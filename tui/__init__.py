"""keel's terminal UI (Textual); `tui.app.main` is what `keel` launches."""
