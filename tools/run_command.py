"""The run_command tool: a shell command in the workspace that cannot hang the agent or flood its context.

Each command runs in its own process group with no terminal and stdin at /dev/null, inside the
session's sandbox; a timeout, a stuck prompt, an interrupt or leftover children end the whole
group. The model sees the exit code and at most ~10 KiB of cleaned output; the rest is on disk.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass

from pydantic import Field

from keel.prompts import render
from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.exec.jobs import JobTable
from keel.tools.exec.processes import (
    RunningCommand,
    describe_exit,
    group_members,
    start_command,
    waiting_for_input,
)
from keel.tools.exec.sandbox import plan_command

POLL_SECONDS = 0.25
TERM_GRACE = 1.0
CANCEL_GRACE = 0.3
LINGER_AFTER_EXIT = 0.5
BACKGROUND_SETTLE = 0.5
LEFTOVER_NOTE = render(
    "leftover_note", what="command", hint="Use background=true for a process that must keep running"
)

_READ_INPUT_SIGNS = re.compile(
    r"EOFError|EOF when reading|Error reading input|[Nn]ot a (?:terminal|tty)|"
    r"Inappropriate ioctl for device|no tty present|terminal prompts disabled|"
    r"could not read (?:Username|Password)|Input is not from a terminal"
)


class RunCommandArgs(ToolArgs):
    command: str = Field(
        description="a bash command line, run from the workspace root; no terminal, stdin is empty"
    )
    timeout: int = Field(
        120,
        ge=1,
        le=3600,
        description="seconds before the command is stopped (ignored with background=true)",
    )
    background: bool = Field(
        False,
        description="start it and return at once with a job id (for servers and watchers); "
        "read or stop it with job_output",
    )


@dataclass
class Outcome:
    """How a foreground command ended."""

    timed_out: bool = False
    waiting_for_input: bool = False
    left_processes: bool = False


class RunCommandTool(Tool[RunCommandArgs]):
    name = "run_command"
    kind = ToolKind.EXEC
    description = (
        "Run a shell command (bash -c) in the workspace root and return its exit code and output "
        "(stdout and stderr merged; long output shows its start and end and says where the rest "
        "is saved). There is no terminal and stdin is empty: use non-interactive flags, never "
        "editors, pagers or prompts. Use background=true for servers and watchers, then "
        "job_output to read or stop them."
    )
    Args = RunCommandArgs

    def __init__(self, *, input_wait_seconds: float = 3.0) -> None:
        self.input_wait_seconds = input_wait_seconds

    async def run(self, args: RunCommandArgs, ctx: ToolContext) -> ToolResult:
        table = JobTable.of(ctx)
        if args.background:
            table.check_capacity()
        plan = await plan_command(
            ctx.sandbox,
            ctx.root,
            [table.log_dir],
            args.command,
            leftover_note=LEFTOVER_NOTE,
            temp_dir=table.temp_dir,
        )
        notes = []
        if plan.warning and not table.sandbox_warning_given:
            table.sandbox_warning_given = True
            notes.append(plan.warning)
        log_path = table.new_log_path("job" if args.background else "cmd")
        try:
            running = await start_command(plan.argv, cwd=ctx.root, env=plan.env, log_path=log_path)
        except OSError as exc:
            raise ToolError(f"could not start the command: {exc}") from None
        if args.background:
            return await self._started_in_background(table, args.command, running, notes)
        try:
            outcome = await self._supervise(running, args.timeout)
        except asyncio.CancelledError:
            stopping = asyncio.ensure_future(running.stop(CANCEL_GRACE))
            try:
                await asyncio.shield(stopping)
            except asyncio.CancelledError:
                pass
            raise
        result = self._result(running, outcome, args.timeout)
        notes = notes or plan.hints(ctx.sandbox, result.output, failed=not result.ok)
        result.output = "\n".join([result.output, *notes])
        return result

    async def _supervise(self, running: RunningCommand, timeout: int) -> Outcome:
        """Wait for the command while watching the clock and for a prompt nobody will answer."""
        exited = asyncio.ensure_future(running.process.wait())
        deadline = time.monotonic() + timeout
        stuck_since: float | None = None
        try:
            while not exited.done():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    await running.stop(TERM_GRACE)
                    return Outcome(timed_out=True)
                await asyncio.wait({exited}, timeout=min(POLL_SECONDS, remaining))
                if exited.done():
                    break
                if running.capture.silent_for >= self.input_wait_seconds and waiting_for_input(
                    running.pgid, running.reader.inode
                ):
                    stuck_since = stuck_since or time.monotonic()
                    if time.monotonic() - stuck_since >= 2 * POLL_SECONDS:
                        await running.stop(TERM_GRACE)
                        return Outcome(waiting_for_input=True)
                else:
                    stuck_since = None
        finally:
            if not exited.done():
                exited.cancel()
        running.returncode = exited.result()
        held_open = not await running.drain(LINGER_AFTER_EXIT)
        if held_open or await _group_lingers(running.pgid, LINGER_AFTER_EXIT):
            await running.stop(TERM_GRACE)
            return Outcome(left_processes=True)
        return Outcome()

    def _result(self, running: RunningCommand, outcome: Outcome, timeout: int) -> ToolResult:
        text, truncated = running.capture.render()
        if not truncated:
            running.capture.path.unlink(missing_ok=True)
        code = running.returncode
        parts = [
            text.rstrip("\n") if text.strip() else "(no output)",
            f"{describe_exit(code)} ({running.elapsed:.1f} s)",
        ]
        if outcome.timed_out:
            parts.append(
                f"timed out after {timeout} s: the command and its child processes were stopped "
                "(the output so far is above). Start servers, watchers and other long-running "
                "processes with background=true; give a slow build or test run a larger timeout."
            )
        elif outcome.waiting_for_input:
            parts.append(
                f"the command appears to be waiting for input: it was blocked reading from a "
                f"terminal with no output for {self.input_wait_seconds:g} s, so it was stopped. "
                + _NO_INPUT_ADVICE
            )
        elif code != 0 and _READ_INPUT_SIGNS.search(text):
            parts.append("the command seems to have tried to read input. " + _NO_INPUT_ADVICE)
        if outcome.left_processes:
            parts.append(LEFTOVER_NOTE)
        ok = code == 0 and not (outcome.timed_out or outcome.waiting_for_input)
        return ToolResult(output="\n".join(parts), ok=ok)

    async def _started_in_background(
        self, table: JobTable, command: str, running: RunningCommand, notes: list[str]
    ) -> ToolResult:
        job = table.add(command, running)
        if job.watcher is not None:
            await asyncio.wait({job.watcher}, timeout=BACKGROUND_SETTLE)
        lines = [f"started {job.status()}"]
        if not job.is_running:
            await running.drain(LINGER_AFTER_EXIT)
            lines = [f"{job.status()} (it ended within {BACKGROUND_SETTLE:g} s)"]
        output = job.take_new_output()
        lines.append(output.rstrip("\n") if output.strip() else "(no output yet)")
        lines.append(
            f"read its new output with job_output(job_id={job.id!r}); stop it with "
            f"job_output(job_id={job.id!r}, stop=true); its full output is saved in "
            f"{running.capture.path}"
        )
        return ToolResult(output="\n".join(lines + notes), ok=True)


async def _group_lingers(pgid: int, patience: float) -> bool:
    """Whether processes of the group outlive the leader (a jail's last ones may take a moment to go)."""
    deadline = time.monotonic() + patience
    while group_members(pgid):
        if time.monotonic() >= deadline:
            return True
        await asyncio.sleep(0.05)
    return False


_NO_INPUT_ADVICE = (
    "Commands here have no terminal and an empty stdin: pass answers as flags (--yes, -y, "
    "-m MESSAGE), in a file, or through a pipe (printf 'y\\n' | cmd), and do not start editors, "
    "pagers or interactive prompts."
)
