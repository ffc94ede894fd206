"""Support for the web_fetch tool: bounded HTTP fetching and HTML turned into readable text."""
