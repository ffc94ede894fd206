"""A session's MCP servers: started together, each within its startup timeout, and stopped together."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from keel.tools.base import Tool, ToolContext
from keel.tools.mcp.config import McpServerConfig
from keel.tools.mcp.connection import McpConnection, ServerState
from keel.tools.mcp.tool import mcp_tool


class McpServers:
    """The configured servers of one session (disabled ones included, for `keel mcp list`)."""

    def __init__(self, configs: dict[str, McpServerConfig], cwd: Path, log_dir: Path) -> None:
        """Stdio servers run in `cwd` (unless configured otherwise); their stderr goes to `log_dir`."""
        self.connections = [
            McpConnection(name, config, cwd, log_dir) for name, config in configs.items()
        ]

    @classmethod
    def for_session(cls, configs: dict[str, McpServerConfig], ctx: ToolContext) -> McpServers:
        """A session's servers: in its workspace, logging to its scratch folder, stopped when it closes."""
        servers = cls(configs, ctx.root, ctx.scratch)
        ctx.closers.append(servers.aclose)
        return servers

    async def start(self) -> None:
        """Start every enabled server at once; returns when each has started or failed."""
        for connection in self.connections:
            connection.start()
        await asyncio.gather(*(c.wait_started() for c in self.connections))

    def problems(self) -> list[str]:
        """One notice for each server that failed to start."""
        return [
            f"MCP server {c.name!r} did not start ({c.problem}); going on without its tools"
            for c in self.connections
            if c.state is ServerState.FAILED
        ]

    def tools(self) -> list[Tool[Any]]:
        """The tools of the servers that started, under their `mcp__server__tool` names (first one wins)."""
        offered: dict[str, Tool[Any]] = {}
        for connection in self.connections:
            if connection.state is not ServerState.STARTED:
                continue
            for remote in connection.tools:
                tool = mcp_tool(connection, remote)
                offered.setdefault(tool.name, tool)
        return list(offered.values())

    async def aclose(self) -> None:
        """Stop every server; a stdio server's processes are gone when this returns."""
        await asyncio.gather(*(c.stop() for c in self.connections))
