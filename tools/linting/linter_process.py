"""What every linter run shares: the process runner (in the sandbox, stdin closed, time limit, group
killed) and its outcome.

Linters are the repository's programs or read its code (node_modules/.bin/eslint, cargo's build.rs,
eslint.config.js): they run as run_command's commands do, in the session's sandbox, with no network
and an environment without keel's secrets (keel.tools.exec.sandbox).
"""

from __future__ import annotations

import asyncio
import shlex
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from keel.prompts import render
from keel.tools.base import ToolError
from keel.tools.exec.processes import signal_group
from keel.tools.exec.sandbox import plan_command
from keel.tools.exec.sandbox_policy import SandboxMode, SandboxPolicy
from keel.tools.linting.syntax_check import Diagnostic

if TYPE_CHECKING:
    from keel.tools.base import ToolContext

FAST_TIMEOUT = 30.0
PROJECT_TIMEOUT = 300.0


@dataclass
class CheckOutcome:
    """One linter's findings; tree-sitter skips `syntax_checked`: files a real parser read."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    syntax_checked: set[Path] = field(default_factory=set)
    note: str | None = None


class LinterFailed(Exception):
    """A linter that is missing, crashed, timed out or printed something we cannot read."""


@dataclass
class ProcessOutput:
    returncode: int
    stdout: str
    stderr: str


LEFTOVER_NOTE = render("leftover_note", what="linter")


def linter_policy(policy: SandboxPolicy) -> SandboxPolicy:
    """The session's sandbox for linters, on the host and without network (lint never downloads).

    Its mode stays the session's: cargo writes target/ and Cargo.lock as a build would (read-only
    under `--approval read-only`, where the session's sandbox is read-only).
    """
    return policy.model_copy(
        update={
            "network": False,
            "workspace_mount": None,
            "binds": {},
            "container": None,
        }
    )


@dataclass
class LinterJail:
    """Where linters run: the policy, the workspace, and the private temp folder Landlock needs."""

    policy: SandboxPolicy
    root: Path
    temp_dir: Callable[[], Path]

    @classmethod
    def of(cls, ctx: ToolContext) -> LinterJail:
        """The session's jail for linters (its temp folder is the one run_command uses)."""
        from keel.tools.exec.jobs import JobTable

        return cls(linter_policy(ctx.sandbox), ctx.root, JobTable.of(ctx).temp_dir)

    async def argv_env(
        self, argv: list[str], cwd: Path, env: dict[str, str] | None
    ) -> tuple[list[str], dict[str, str]]:
        """The confined command line and its environment; LinterFailed when the policy refuses."""
        command = f"cd {shlex.quote(str(cwd))} && exec {shlex.join(argv)}"
        try:
            plan = await plan_command(
                self.policy,
                self.root,
                [],
                command,
                leftover_note=LEFTOVER_NOTE,
                temp_dir=self.temp_dir,
            )
        except ToolError as exc:
            raise LinterFailed(f"{Path(argv[0]).name} did not run: {exc}") from None
        full = {**plan.env, **(env or {})}
        if self.policy.mode is SandboxMode.READ_ONLY:  # cargo builds where it may write
            full.setdefault("CARGO_TARGET_DIR", f"{plan.env.get('TMPDIR', '/tmp')}/cargo-target")
        return plan.argv, full


async def run_process(
    jail: LinterJail,
    argv: list[str],
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
) -> ProcessOutput:
    """Run a linter in the jail with stdin closed and a time limit; the whole group dies on timeout."""
    name = Path(argv[0]).name
    confined, full_env = await jail.argv_env(argv, cwd, env)
    try:
        proc = await asyncio.create_subprocess_exec(
            *confined,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=full_env,
            start_new_session=True,
        )
    except OSError as exc:
        raise LinterFailed(f"{name} could not start: {exc}") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except BaseException as exc:
        signal_group(proc.pid, signal.SIGKILL)
        await proc.wait()
        if isinstance(exc, TimeoutError):
            raise LinterFailed(f"{name} timed out after {timeout:.0f}s") from None
        raise
    stderr = err.decode(errors="replace")
    if proc.returncode in (126, 127):  # the shell in the jail could not run the program
        raise LinterFailed(f"{name} could not start: {first_line(stderr)}")
    return ProcessOutput(proc.returncode or 0, out.decode(errors="replace"), stderr)


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:200] if lines else "no output"
