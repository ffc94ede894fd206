"""The public surface of MCP: the configured servers and their states (imports the MCP SDK)."""

from __future__ import annotations

from keel.tools.mcp.connection import ServerState
from keel.tools.mcp.servers import McpServers

__all__ = ["McpServers", "ServerState"]
