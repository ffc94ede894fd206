"""`keel mcp list`: each configured MCP server, started as a session would start it, its state and its tools."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any, TextIO

from keel.agent.core.config import KeelConfig
from keel.agent.core.errors import ExitCode

NONE_CONFIGURED = """\
No MCP servers are configured. Add one to .keel/config.toml (this repository) or
~/.config/keel/config.toml (you), e.g.:

  [mcp_servers.docs]
  command = "npx"
  args = ["-y", "@modelcontextprotocol/server-filesystem", "docs"]

  [mcp_servers.remote]
  url = "http://127.0.0.1:8000/mcp"

(README: "Adding an MCP server".)
"""


def add_mcp_parser(commands: Any) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="the MCP servers of the config and their tools",
        description="The MCP servers of the config ([mcp_servers.NAME] tables in .keel/config.toml "
        "or ~/.config/keel/config.toml), whose tools sessions get as mcp__SERVER__TOOL. `keel mcp "
        "list` starts each one as a session would and shows its state and its tools.",
    )
    actions = mcp.add_subparsers(
        dest="mcp_command",
        required=True,
        parser_class=type(mcp),
        title="commands",
        metavar="{list}",
    )
    listing = actions.add_parser(
        "list",
        help="start each server, show its state and its tools",
        description="Start each configured MCP server as a session would and show its state "
        "(started, failed and why, disabled) and its tools. Exit 0 when every enabled server "
        "started, 1 when one failed.",
    )
    listing.add_argument("--cwd", type=Path, default=argparse.SUPPRESS, help="workspace directory")
    listing.add_argument(
        "--trust",
        action="store_true",
        default=argparse.SUPPRESS,
        help="trust this repository's .keel/config.toml for this run (its servers start)",
    )


def mcp_command(config: KeelConfig, cwd: Path, out: TextIO) -> int:
    """Exit 0 when every enabled server started, 1 when one failed (its line says why)."""
    if not config.mcp_servers:
        out.write(NONE_CONFIGURED)
        return ExitCode.OK
    return asyncio.run(_list(config, cwd, out))


async def _list(config: KeelConfig, cwd: Path, out: TextIO) -> int:
    from keel.agent.core.api.mcp import McpServers, ServerState

    with tempfile.TemporaryDirectory(prefix="keel-mcp-") as logs:
        servers = McpServers(config.mcp_servers, cwd, Path(logs), config.sandbox)
        try:
            await servers.start()
            tools = servers.tools()
            for connection in servers.connections:
                kind = "read-only" if connection.config.read_only else "commands"
                out.write(
                    f"{connection.name}  ({connection.config.transport}: {connection.where()})  "
                    f"{connection.describe()}\n"
                )
                own = [t for t in tools if getattr(t, "connection", None) is connection]
                width = max((len(t.name) for t in own), default=0)
                for tool in own:
                    summary = tool.description.splitlines()[0] if tool.description else ""
                    out.write(f"  {tool.name:<{width}}  {summary}\n")
                if connection.state is ServerState.STARTED:
                    noun = "tool" if len(own) == 1 else "tools"
                    out.write(f"  ({len(own)} {noun}, approved as {kind})\n")
        finally:
            await servers.aclose()
    failed = any(c.state is ServerState.FAILED for c in servers.connections)
    return ExitCode.FAILURE if failed else ExitCode.OK
