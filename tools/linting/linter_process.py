"""What every linter run shares: the process runner (stdin closed, time limit, group killed) and its outcome."""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

from keel.tools.exec.processes import signal_group
from keel.tools.linting.syntax_check import Diagnostic

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


async def run_process(
    argv: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> ProcessOutput:
    """Run a linter with stdin closed and a time limit; the whole process group dies on timeout."""
    name = Path(argv[0]).name
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **(env or {})},
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
    return ProcessOutput(
        proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")
    )


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:200] if lines else "no output"
