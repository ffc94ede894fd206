"""Slash commands written as Markdown files (Claude Code's custom commands format), found and expanded."""
