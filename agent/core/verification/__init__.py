"""Checks of the files a task changed before it may end: syntax, lint and the project's tests (issue 29)."""
