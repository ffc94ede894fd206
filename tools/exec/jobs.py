"""The background commands of a session (servers, watchers): started by run_command, read and stopped by job_output.

The table lives on the ToolContext, created on first use; the session's close ends every job.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from keel.tools.base import ToolContext, ToolError
from keel.tools.exec.processes import RunningCommand, describe_exit

MAX_RUNNING_JOBS = 16
STOP_GRACE = 1.0


@dataclass
class Job:
    """One background command and how much of its output the model has already been shown."""

    id: str
    command: str
    running: RunningCommand
    shown_bytes: int = 0
    shown_lines: int = 0
    ended_at: float | None = None
    stopped: bool = False
    watcher: asyncio.Task[None] | None = field(default=None, repr=False)

    @property
    def is_running(self) -> bool:
        return self.running.returncode is None

    def status(self) -> str:
        """One line: what the job is and whether it still runs."""
        head = f"job {self.id} `{self.command}`"
        if self.is_running:
            return f"{head}: running for {self.running.elapsed:.0f} s (pid {self.running.pgid})"
        how = "stopped" if self.stopped else "exited"
        return f"{head}: {how}, {describe_exit(self.running.returncode)}"

    def take_new_output(self) -> str:
        """The output since the last call (head and tail when long), marking it as shown."""
        capture = self.running.capture
        text, _ = capture.render_since(self.shown_bytes, self.shown_lines)
        self.shown_bytes, self.shown_lines = capture.total_bytes, capture.total_lines
        return text


class JobTable:
    """Background jobs by id, plus the session's command bookkeeping (log files, one-time notices)."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        log_dir.mkdir(parents=True, exist_ok=True)
        self.jobs: dict[str, Job] = {}
        self.sandbox_warning_given = False
        self._temp_dir: Path | None = None
        self._job_numbers = itertools.count(1)
        self._log_numbers = itertools.count(1)

    @classmethod
    def of(cls, ctx: ToolContext) -> JobTable:
        """The session's table, created on first use with its close registered on the context."""
        if ctx.jobs is None:
            ctx.jobs = cls(ctx.scratch / "commands")
            ctx.closers.append(ctx.jobs.aclose)
        return ctx.jobs

    def temp_dir(self) -> Path:
        """The session's private temp folder for Landlock-confined commands (made now, removed at close).

        It lies in the system temp dir rather than keel's home so that the paths of unix sockets
        made in it stay under the kernel's 108-byte limit.
        """
        if self._temp_dir is None:
            self._temp_dir = Path(tempfile.mkdtemp(prefix="keel-tmp-"))
        return self._temp_dir

    def new_log_path(self, kind: str) -> Path:
        return self.log_dir / f"{kind}-{next(self._log_numbers):04d}.log"

    def check_capacity(self) -> None:
        running = [job for job in self.jobs.values() if job.is_running]
        if len(running) >= MAX_RUNNING_JOBS:
            ids = ", ".join(job.id for job in running)
            raise ToolError(
                f"{len(running)} background jobs are already running ({ids}); "
                "stop some with job_output(job_id=..., stop=true) first"
            )

    def add(self, command: str, running: RunningCommand) -> Job:
        job = Job(id=f"job{next(self._job_numbers)}", command=_one_line(command), running=running)
        job.watcher = asyncio.ensure_future(self._watch(job))
        self.jobs[job.id] = job
        return job

    def get(self, job_id: str) -> Job:
        try:
            return self.jobs[job_id.strip()]
        except KeyError:
            known = ", ".join(self.jobs) or "none yet"
            raise ToolError(
                f"there is no background job {job_id!r}; the jobs of this session: {known} "
                "(run_command with background=true starts one and says its id)"
            ) from None

    async def stop(self, job: Job) -> None:
        """End the job's whole process group and collect the rest of its output."""
        if job.is_running:
            job.stopped = True
        await job.running.stop(STOP_GRACE)
        if job.watcher is not None:
            await asyncio.wait({job.watcher}, timeout=1.0)

    async def aclose(self) -> None:
        """End every job and remove the private temp folder (the session is over)."""
        await asyncio.gather(*(self.stop(job) for job in self.jobs.values()))
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)

    async def _watch(self, job: Job) -> None:
        job.running.returncode = await job.running.process.wait()
        job.ended_at = time.monotonic()


def _one_line(command: str) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= 80 else flat[:77] + "..."
