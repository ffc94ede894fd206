"""A session's MCP servers: started together, each within its startup timeout, and stopped together."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from keel.tools.base import Tool, ToolContext
from keel.tools.exec.sandbox_policy import SandboxPolicy
from keel.tools.mcp.config import McpServerConfig
from keel.tools.mcp.connection import McpConnection, ServerState
from keel.tools.mcp.tool import mcp_tool


class McpServers:
    """The configured servers of one session (disabled ones included, for `keel mcp list`)."""

    def __init__(
        self,
        configs: dict[str, McpServerConfig],
        cwd: Path,
        log_dir: Path,
        sandbox: SandboxPolicy,
    ) -> None:
        """Stdio servers run in `cwd` (unless configured otherwise) confined by `sandbox` as run_command's
        commands are; their stderr goes to `log_dir`."""
        self.connections = [
            McpConnection(name, config, cwd, log_dir, sandbox) for name, config in configs.items()
        ]
        self._offered: dict[str, Tool[Any]] = {}
        self._unusable: list[str] = []

    @classmethod
    def for_session(cls, configs: dict[str, McpServerConfig], ctx: ToolContext) -> McpServers:
        """A session's servers: in its workspace, logging to its scratch folder, stopped when it closes."""
        servers = cls(configs, ctx.root, ctx.scratch, ctx.sandbox)
        ctx.closers.append(servers.aclose)
        return servers

    async def start(self) -> None:
        """Start every enabled server at once; returns when each has started or failed."""
        for connection in self.connections:
            connection.start()
        await asyncio.gather(*(c.wait_started() for c in self.connections))
        self._offered = self._tools()

    def problems(self) -> list[str]:
        """One notice for each server that failed to start, and for each tool that could not be offered."""
        failed = [
            f"MCP server {c.name!r} did not start ({c.problem}); going on without its tools"
            for c in self.connections
            if c.state is ServerState.FAILED
        ]
        return failed + self._unusable

    def tools(self) -> list[Tool[Any]]:
        """The tools of the servers that started, under their `mcp__server__tool` names (first one wins)."""
        return list(self._offered.values())

    def _tools(self) -> dict[str, Tool[Any]]:
        offered: dict[str, Tool[Any]] = {}
        for connection in self.connections:
            if connection.state is not ServerState.STARTED:
                continue
            for remote in connection.tools:
                try:
                    tool = mcp_tool(connection, remote)
                except Exception as exc:  # noqa: BLE001 - a server's odd listing costs that tool only
                    self._unusable.append(
                        f"MCP server {connection.name!r}: its tool {remote.name!r} is left out ({exc})"
                    )
                    continue
                offered.setdefault(tool.name, tool)
        return offered

    async def aclose(self) -> None:
        """Stop every server; a stdio server's processes are gone when this returns."""
        await asyncio.gather(*(c.stop() for c in self.connections))
