"""The TUI's screens, one per module; their styles live in the .tcss file beside each."""
