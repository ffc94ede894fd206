"""keel's terminal UI (Textual); `keel.tui.app.main` is what `keel` launches."""
