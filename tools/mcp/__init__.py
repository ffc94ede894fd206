"""MCP servers' tools: the config of a server, one connection per server, and the tool the model calls."""
