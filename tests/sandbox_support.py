"""What the sandbox tests share: a workspace with a policy, one command run through the real tool, and a
loopback server that greets and counts each connection (what a confined command tries to reach)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from keel.tools.base import ToolContext
from keel.tools.exec.sandbox_policy import SandboxPolicy
from keel.tools.run_command import RunCommandArgs, RunCommandTool


def make_ctx(tmp_path: Path, **policy: object) -> ToolContext:
    """A workspace under tmp_path whose commands run under a policy built from `policy`."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return ToolContext(
        root=workspace, scratch=tmp_path / "scratch", sandbox=SandboxPolicy(**policy)
    )


async def run_in(ctx: ToolContext, command: str) -> str:
    """The output of one command run by the real run_command tool."""
    result = await RunCommandTool().run(RunCommandArgs(command=command, timeout=60), ctx)
    return result.output


async def serve_greetings(connections: list[int]) -> asyncio.Server:
    """Listening on 127.0.0.1 (a free port); each connection appends to `connections` and gets one line."""

    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        writer.write(b"hello from the host\n")
        await writer.drain()
        writer.close()

    return await asyncio.start_server(greet, "127.0.0.1", 0)


def path_without_bwrap(farm_root: Path) -> str:
    """PATH as it is, with every folder that holds bwrap replaced by links to its other programs."""
    farms: dict[str, str] = {}
    entries = []
    for entry in os.environ["PATH"].split(os.pathsep):
        if not os.path.isfile(os.path.join(entry, "bwrap")):
            entries.append(entry)
            continue
        real = os.path.realpath(entry)
        if real not in farms:
            farm = farm_root / f"bin{len(farms)}"
            farm.mkdir(parents=True, exist_ok=True)
            for name in os.listdir(real):
                if name != "bwrap" and not (farm / name).exists():
                    os.symlink(os.path.join(real, name), farm / name)
            farms[real] = str(farm)
        entries.append(farms[real])
    return os.pathsep.join(entries)
