"""Support for the editing tools: reading and writing files, matching edits, the patch format."""
