"""The TUI's widgets, one per module; their styles live in the .tcss file beside each."""
