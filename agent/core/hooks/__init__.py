"""Hooks: commands the person configured that keel runs at points of a session, in Claude Code's format."""
