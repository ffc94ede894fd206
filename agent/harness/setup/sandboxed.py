"""One proposed command run as run_command runs it: in the sandbox (workspace-write), in a worktree."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

from pydantic import BaseModel

from keel.agent.core.api.sandbox import SandboxMode, SandboxPolicy, plan_command
from keel.agent.core.api.tools import ToolError
from keel.agent.harness.batch.runner import LEFTOVER_NOTE, run_shell

OUTPUT_KEPT = 20_000


class CommandRun(BaseModel):
    """How one command ended, and the end of its output."""

    command: str
    exit_code: int | None = None
    timed_out: bool = False
    output: str = ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def describe(self) -> str:
        if self.timed_out:
            return f"`{self.command}` timed out"
        return f"`{self.command}` exited with {self.exit_code}"


def setup_policy(base: SandboxPolicy) -> SandboxPolicy:
    """The config's policy, but always writing only the worktree: installs stay in it."""
    return base.model_copy(update={"mode": SandboxMode.WORKSPACE_WRITE})


async def run_sandboxed(
    policy: SandboxPolicy, root: Path, command: str, timeout: float, log: Path
) -> CommandRun:
    """Run `command` with bash in `root` under `policy`; its whole output is appended to `log`."""
    temp = log.parent / "tmp"

    def temp_dir() -> Path:
        temp.mkdir(parents=True, exist_ok=True)
        return temp

    try:
        plan = await plan_command(
            policy, root, [], command, leftover_note=LEFTOVER_NOTE, temp_dir=temp_dir
        )
    except ToolError as exc:
        return CommandRun(command=command, output=str(exc))
    log.parent.mkdir(parents=True, exist_ok=True)
    start = log.stat().st_size if log.exists() else 0
    outcome = await run_shell(
        shlex.join(plan.argv), root, timeout, asyncio.Event(), log, env=plan.env
    )
    text = log.read_bytes()[start:].decode("utf-8", "replace").partition("\n")[2]
    return CommandRun(
        command=command,
        exit_code=outcome.exit_code,
        timed_out=outcome.timed_out,
        output=text[-OUTPUT_KEPT:] if len(text) > OUTPUT_KEPT else text,
    )
