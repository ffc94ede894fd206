"""`keel acp`'s process: ACP on stdin/stdout until the client closes stdin or a signal stops it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import stat
import sys
from typing import cast

from acp import Agent, run_agent, stdio_streams

from keel.agent.acp.agent import KeelAgent, SettingsFor
from keel.agent.core.errors import UsageError

STDIO_LIMIT = 50 * 1024 * 1024  # one JSON-RPC line may carry a whole file


def _check_stdio() -> None:
    """ACP runs over pipes (an editor starts `keel acp`); a file cannot carry it."""
    for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout)):
        mode = os.fstat(stream.fileno()).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
            raise UsageError(
                f"keel acp speaks the Agent Client Protocol over pipes, and its {name} is a file; "
                "let an editor start it (README: Using keel from Zed)"
            )


async def _protocol_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin/stdout for the protocol alone: anything else printed to stdout (a library's
    message, a print) goes to stderr instead, where it cannot break a JSON-RPC line."""
    _check_stdio()
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    shown, sys.stdout = sys.stdout, protocol_out
    try:
        return await stdio_streams(limit=STDIO_LIMIT)
    finally:
        sys.stdout = shown


async def serve(settings_for: SettingsFor) -> int:
    """Be an ACP agent until the client goes; every session is closed (its log, its processes) on the way out."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")
    agent = KeelAgent(settings_for)
    reader, writer = await _protocol_streams()
    loop = asyncio.get_running_loop()
    serving = asyncio.current_task()
    assert serving is not None
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, serving.cancel)
    try:
        # the methods keel leaves out (session/list, modes, …) are answered "method not found"
        await run_agent(cast(Agent, agent), writer, reader)
    except asyncio.CancelledError:
        pass
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(signum)
        await agent.close()
        with contextlib.suppress(OSError, RuntimeError):
            writer.close()
    return 0
