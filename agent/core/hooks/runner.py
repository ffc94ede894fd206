"""Run one hook command as run_command runs a command: sandboxed in the workspace, with a timeout; the event
as JSON on its stdin, its exit code, stdout and stderr back."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from keel.tools.base import ToolContext, ToolError
from keel.tools.exec.jobs import JobTable
from keel.tools.exec.processes import signal_group
from keel.tools.exec.sandbox import plan_command

MAX_OUTPUT = 20_000  # characters of a hook's stdout or stderr kept


@dataclass
class HookRun:
    """How one command went: `exit_code` None when it could not start or ran out of time (`problem` says)."""

    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: int
    problem: str = ""

    def answer(self) -> dict[str, Any]:
        """The JSON object the command printed on stdout (exit 0), else an empty one."""
        if self.exit_code != 0 or not self.stdout.strip().startswith("{"):
            return {}
        try:
            data = json.loads(self.stdout)
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}


async def run_hook(
    command: str, payload: dict[str, Any], timeout: int, ctx: ToolContext
) -> HookRun:
    """Run `command` with `payload` on stdin under the session's sandbox; never raises for the command's sake."""
    started = time.monotonic()

    def took() -> int:
        return int((time.monotonic() - started) * 1000)

    table = JobTable.of(ctx)
    try:
        plan = await plan_command(
            ctx.sandbox, ctx.root, [], command, leftover_note="", temp_dir=table.temp_dir
        )
    except ToolError as exc:
        return HookRun(None, "", "", took(), f"the sandbox refused to run it: {exc}")
    env = plan.env | {"CLAUDE_PROJECT_DIR": str(ctx.root), "KEEL_PROJECT_DIR": str(ctx.root)}
    try:
        process = await asyncio.create_subprocess_exec(
            *plan.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=ctx.root,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(None, "", "", took(), f"it could not start: {exc}")
    data = json.dumps(payload, ensure_ascii=False).encode()
    try:
        out, err = await asyncio.wait_for(process.communicate(data), timeout)
    except (TimeoutError, asyncio.CancelledError) as exc:
        signal_group(process.pid, 9)
        await process.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        return HookRun(None, "", "", took(), f"it ran out of its {timeout} s and was stopped")
    return HookRun(
        process.returncode,
        out.decode(errors="replace")[:MAX_OUTPUT],
        err.decode(errors="replace")[:MAX_OUTPUT],
        took(),
    )
