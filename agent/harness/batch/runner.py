"""One batch attempt (worktree, setup, agent, test, cleanup) and the local backend running N of them at once."""

from __future__ import annotations

import asyncio
import shutil
import signal
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from keel.agent.core.api.git import (
    WorkspaceError,
    Worktree,
    commit_all,
    create_worktree,
    delete_branch_at,
    keep_worktree,
    remove_worktree,
    save_changes,
)
from keel.agent.core.api.sandbox import SandboxMode, SandboxPolicy, plan_command, signal_group
from keel.agent.core.api.tools import ToolError
from keel.agent.core.protocol import Interrupt, TaskFinished, UserPrompt
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.harness.batch.results import RERUN_ON_RESUME, ResultRow
from keel.agent.harness.batch.tasks import Task
from keel.prompts import render

OUTPUT_TAIL_CHARS = 400
SETUP_COMMIT = "keel batch: setup of "  # then the task's id: keel's commit of what setup changed
LEFT_BEHIND_COMMIT = "keel batch: work left uncommitted by a run that was killed"
LEFTOVER_NOTE = render("leftover_note", what="command")
REFUSED_EXIT = 126  # the sandbox policy refused to run a setup or test command
Spec = TypeVar("Spec")
Row = TypeVar("Row", bound=ResultRow)


class AttemptSpec(BaseModel):
    """Everything one attempt needs; plain data, so it travels to a Ray worker as JSON."""

    task: Task
    attempt: int
    settings: SessionSettings
    out_dir: Path
    command_timeout: float = 900.0
    keep_worktree: bool = False
    worktree_root: Path | None = None

    def file(self, kind: str, suffix: str) -> Path:
        return attempt_file(self.out_dir, self.task.id, self.attempt, kind, suffix)


def attempt_file(out_dir: Path, task_id: str, attempt: int, kind: str, suffix: str) -> Path:
    """Where an attempt's file of a kind goes: OUT/KIND/TASK.ATTEMPT+SUFFIX (logs, patches, work)."""
    label = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in f"{task_id}.{attempt}")
    return out_dir / kind / f"{label}{suffix}"


class CommandOutcome(BaseModel):
    """How a setup or test command ended; its output is in the log file."""

    command: str
    exit_code: int | None = None
    timed_out: bool = False
    stopped: bool = False
    tail: str = ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def describe(self) -> str:
        if self.timed_out:
            return f"`{self.command}` timed out"
        return f"`{self.command}` exited with {self.exit_code}: {last_lines(self.tail)}"


def last_lines(text: str, limit: int = 200) -> str:
    """The whole last lines of an output that fit in `limit` characters (the end of one long line
    from a word on), marked with … where something was left out."""
    lines, size = text.strip().splitlines(), 0
    kept: list[str] = []
    for line in reversed(lines):
        if size + len(line) + 1 > limit:
            break
        kept.insert(0, line)
        size += len(line) + 1
    if not kept and lines:
        end = lines[-1][-limit + 1 :]
        return "…" + (end.split(" ", 1)[1] if " " in end[1:] else end)
    return ("…\n" if len(kept) < len(lines) else "") + "\n".join(kept)


async def run_shell(
    command: str,
    cwd: Path,
    timeout: float,
    stop: asyncio.Event,
    log: Path,
    env: dict[str, str] | None = None,
    argv: list[str] | None = None,
) -> CommandOutcome:
    """Run a shell command in its own process group; killed (with its children) on timeout or stop.
    `env` replaces this process's environment when given; `argv` (the command wrapped in a sandbox)
    runs instead of a shell, while the log and the outcome name `command`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as output:  # noqa: ASYNC230 -- a local log file
        output.write(f"$ {command}\n".encode())
        output.flush()
        start = output.tell()
        process = await asyncio.create_subprocess_exec(
            *(argv or ["/bin/sh", "-c", command]),
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
        exited = asyncio.ensure_future(process.wait())
        stopping = asyncio.ensure_future(stop.wait())
        killed = False
        try:
            await asyncio.wait(
                {exited, stopping}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            stopping.cancel()
            if not exited.done():
                killed = True
                signal_group(process.pid, signal.SIGKILL)
                await exited
    with open(log, "rb") as written:  # noqa: ASYNC230
        written.seek(max(start, log.stat().st_size - OUTPUT_TAIL_CHARS))
        tail = written.read().decode("utf-8", "replace")
    return CommandOutcome(
        command=command,
        exit_code=None if killed else process.returncode,
        timed_out=killed and not stop.is_set(),
        stopped=killed and stop.is_set(),
        tail=tail,
    )


def task_policy(base: SandboxPolicy) -> SandboxPolicy:
    """The session's sandbox policy for a task's setup and test commands, writing the worktree
    (full-access, chosen by the user, stays unconfined)."""
    if base.mode is SandboxMode.FULL_ACCESS:
        return base
    return base.model_copy(update={"mode": SandboxMode.WORKSPACE_WRITE})


async def _interrupt_when_stopped(session: Session, stop: asyncio.Event) -> None:
    """Interrupt the attempt once, when the batch stops: the session answers with turn.aborted (a queued
    prompt is aborted too), then the task's session.finished, which ends the attempt's event loop."""
    await stop.wait()
    session.submit(Interrupt())


async def run_session(
    settings: SessionSettings,
    prompt: str,
    stop: asyncio.Event,
    on_log: Callable[[Path], None] = lambda path: None,
) -> TaskFinished:
    """One headless task in a new session, interrupted when `stop` is set; `on_log` gets the session
    log's path as soon as it exists."""
    session = Session(settings)
    on_log(session.log.path)
    async with session:
        watcher = asyncio.create_task(_interrupt_when_stopped(session, stop))
        try:
            session.submit(UserPrompt(text=prompt))
            async for event in session.events():
                if isinstance(event, TaskFinished):
                    return event
        finally:
            watcher.cancel()
    raise RuntimeError("the session closed without session.finished")


class Attempt:
    """Runs one attempt to a ResultRow; whatever happens, its worktree is saved and removed at the end."""

    def __init__(self, spec: AttemptSpec, stop: asyncio.Event) -> None:
        self.spec = spec
        self.task = spec.task
        self.stop = stop
        self.row = ResultRow(id=spec.task.id, attempt=spec.attempt, status="error")
        self.worktree: Worktree | None = None
        self.base = ""
        self.saved = False
        self.temp: Path | None = None  # the temp folder of its confined commands (Landlock)

    async def run(self) -> ResultRow:
        started = time.monotonic()
        try:
            await self._run()
        except WorkspaceError as exc:
            self.row.status, self.row.reason = "error", str(exc)
        except Exception as exc:  # noqa: BLE001 -- a bug must cost one attempt, not the whole batch
            self.row.status, self.row.reason = (
                "error",
                f"internal error: {type(exc).__name__}: {exc}",
            )
            self._log_text("error.txt", traceback.format_exc())
        finally:
            await self._clean_up()
            self.row.duration = round(time.monotonic() - started, 3)
        return self.row

    async def _run(self) -> None:
        self.worktree = await create_worktree(
            self.task.repo,
            f"batch/{self.task.id}-{self.spec.attempt}",
            self.task.ref,
            self.spec.worktree_root,
        )
        self.row.branch, self.base = self.worktree.branch, self.worktree.base
        if not await self._setup():
            return
        finished = await self._session()
        self.row.status, self.row.reason = finished.status, finished.reason
        self.row.tokens, self.row.steps, self.row.cost = (
            finished.usage.total_tokens,
            finished.steps,
            finished.cost,
        )
        if finished.status in RERUN_ON_RESUME:  # no verdict to test for; the reason says why
            return
        await self._save()
        if self.task.test is None:
            self.row.passed = finished.status == "completed"
            return
        outcome = await self._command(self.task.test, "test")
        if outcome.stopped:
            self.row.status, self.row.reason = "interrupted", "stopped while testing"
        else:
            self.row.passed = outcome.ok
            if not outcome.ok:
                self.row.reason = f"test {outcome.describe()}"

    async def _setup(self) -> bool:
        if self.stop.is_set():
            self.row.status, self.row.reason = "interrupted", "stopped before it started"
            return False
        for command in self.task.setup:
            outcome = await self._command(command, "setup")
            if outcome.stopped:
                self.row.status, self.row.reason = "interrupted", "stopped during setup"
                return False
            if not outcome.ok:
                self.row.status, self.row.reason = "setup_failed", f"setup {outcome.describe()}"
                return False
        if self.task.setup and self.worktree is not None:
            # What setup changed is committed apart, so the patch holds the agent's work only.
            self.base = await commit_all(self.worktree, f"{SETUP_COMMIT}{self.task.id}")
        return True

    async def _command(self, command: str, kind: str) -> CommandOutcome:
        """A setup or test command, run as run_command runs one: in the sandbox, writing only the
        worktree, with an environment that holds none of keel's secrets."""
        assert self.worktree is not None
        log = self.spec.file("logs", f".{kind}.log")
        try:
            plan = await plan_command(
                task_policy(self.spec.settings.sandbox),
                self.worktree.path,
                [],
                command,
                leftover_note=LEFTOVER_NOTE,
                temp_dir=self._temp_dir,
            )
        except ToolError as exc:
            log.parent.mkdir(parents=True, exist_ok=True)
            with open(log, "a", encoding="utf-8") as output:  # noqa: ASYNC230 -- a local log file
                output.write(f"$ {command}\n{exc}\n")
            return CommandOutcome(command=command, exit_code=REFUSED_EXIT, tail=str(exc))
        return await run_shell(
            command,
            self.worktree.path,
            self.spec.command_timeout,
            self.stop,
            log,
            env=plan.env,
            argv=plan.argv,
        )

    def _temp_dir(self) -> Path:
        if self.temp is None:
            self.temp = Path(tempfile.mkdtemp(prefix="keel-batch-tmp-"))
        return self.temp

    async def _session(self) -> TaskFinished:
        assert self.worktree is not None
        settings = self.spec.settings.model_copy(
            update={
                "cwd": self.worktree.path,
                "interactive": False,
                "model": self.task.model or self.spec.settings.model,
                "budget": self.task.budget or self.spec.settings.budget,
                "checkpoints": False,  # the attempt's branch and patch already keep every change
            }
        )
        return await run_session(settings, self.task.prompt, self.stop, self._note_log)

    def _note_log(self, path: Path) -> None:
        self.row.session_log = str(path)

    async def _save(self) -> None:
        if self.worktree is None or self.saved:
            return
        self.saved = True
        message = f"keel batch: {self.task.id} attempt {self.spec.attempt} ({self.row.status})\n\n{self.task.prompt}"
        patch = await save_changes(
            self.worktree, message, self.spec.file("patches", ".patch"), since=self.base
        )
        self.row.patch = str(patch) if patch else None

    async def _clean_up(self) -> None:
        if self.temp is not None:
            shutil.rmtree(self.temp, ignore_errors=True)
        if self.worktree is None:
            return
        try:
            await self._save()
        except WorkspaceError as exc:
            self.row.reason = f"{self.row.reason}; saving the changes failed: {exc}".lstrip("; ")
        if self.spec.keep_worktree:
            keep_worktree(self.worktree)
            return
        try:
            await remove_worktree(self.worktree)
        except WorkspaceError as exc:
            self.row.reason = f"{self.row.reason}; removing the worktree failed: {exc}".lstrip("; ")
            return
        await self._drop_branch_without_work()

    async def _drop_branch_without_work(self) -> None:
        """An attempt that committed nothing (its branch is where it started) leaves no branch behind."""
        assert self.worktree is not None
        try:
            dropped = await delete_branch_at(self.worktree, self.base or self.worktree.base)
        except WorkspaceError:
            return  # harmless: the branch stays, and the row still names it
        if dropped:
            self.row.branch = None

    def _log_text(self, suffix: str, text: str) -> None:
        path = self.spec.file("logs", f".{suffix}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


async def run_attempt(spec: AttemptSpec, stop: asyncio.Event | None = None) -> ResultRow:
    """Run one attempt: worktree, setup, the agent, the test; always ends with its worktree removed."""
    return await Attempt(spec, stop or asyncio.Event()).run()


async def run_local(
    specs: Iterable[Spec],
    jobs: int,
    on_row: Callable[[Row], None],
    stop: asyncio.Event,
    run: Callable[[Spec, asyncio.Event], Awaitable[Row]] = run_attempt,  # type: ignore[assignment]
) -> None:
    """Run the attempts with at most `jobs` at once in this process; after `stop`, none is started.
    `run` runs one attempt (a batch attempt by default; `keel bench` passes its trials)."""
    pending = iter(specs)

    async def worker() -> None:
        for spec in pending:  # one shared iterator: each attempt is taken by one worker
            if stop.is_set():
                return
            on_row(await run(spec, stop))

    await asyncio.gather(*(worker() for _ in range(max(1, jobs))))
