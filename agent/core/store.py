"""Session logs: one JSON line per event, appended before the event is published; one writer per log."""

from __future__ import annotations

import asyncio
import errno
import os
import secrets
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from keel.agent.core.config_files import keel_home
from keel.agent.core.errors import SessionInUse, SessionLogError, UsageError
from keel.agent.core.git.lock import hold
from keel.agent.core.log_lines import read_line_events
from keel.agent.core.model.redact import Redactor
from keel.agent.core.protocol import (
    AnyEvent,
    AssistantDelta,
    AssistantMessage,
    ContextSummarized,
    ModelProgress,
    SessionStarted,
    parse_event,
)


def sessions_dir() -> Path:
    return keel_home() / "sessions"


def new_session_id() -> str:
    """Sortable by time; made unique by `claim_new_log` (ids made in the same second may meet)."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def claim_new_log(directory: Path, make_id: Callable[[], str] = new_session_id) -> Path:
    """The log of a new session, created empty so that no other session takes its id: 1,000 rollouts started
    in one second draw the same 6 hex digits about once in 30 runs, and the second one failed as "in use" (or,
    had the first ended, would have appended to its log)."""
    directory.mkdir(parents=True, exist_ok=True)
    while True:
        path = directory / f"{make_id()}.jsonl"
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            continue
        return path


def _write_failed(path: Path, exc: OSError, doing: str) -> SessionLogError:
    """The one-line error of a log that failed, saying what to do about it."""
    full = exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
    remedy = (
        f"free space in {path.parent} (or lift the file-size limit)"
        if full
        else f"check that {path.parent} is writable"
    )
    return SessionLogError(
        f"cannot {doing} the session log {path}: {exc.strerror or exc}; the log keeps every event "
        f"before this one; {remedy}"
    )


def no_task_to_continue(session_id: str) -> UsageError:
    """The refusal to continue a session killed before it recorded its task (it would run an empty one)."""
    return UsageError(
        f"session {session_id} has no task to continue: it was stopped before it recorded one. "
        f'Give it one (keel run --resume {session_id} "PROMPT") or start anew (keel run "PROMPT")'
    )


class SessionLog:
    """The append-only event log of one session, held by one process at a time (an flock on the log).

    A write that fails (ENOSPC, EFBIG, EIO) raises SessionLogError and leaves the log as it was before it;
    every later append raises it again, so nothing goes on unlogged.
    """

    def __init__(self, path: Path, redactor: Redactor | None = None) -> None:
        """Raises SessionInUse when another process has the session open."""
        self.path = path
        self.redactor = redactor or Redactor.from_environment()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = hold(path)
            if lock is None:
                raise SessionInUse(
                    f"session {path.stem} is open in another keel process; wait for it to end "
                    "(two at once would interleave one log), or start a new session"
                )
            self._lock: int | None = lock
            repair_torn_tail(path)  # under the lock: never cut the line a live writer is writing
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _write_failed(path, exc, "open") from None
        self._size = os.fstat(self._fd).st_size  # where the log ends after its last whole line
        self._closed = False
        self._failure: SessionLogError | None = None  # once a write failed, the log takes no more
        self._unsynced = False
        self._syncing: Future[None] | None = None

    def append(self, event: AnyEvent) -> AnyEvent:
        """Write one event and return it as logged: itself, or its redacted copy when it held a secret. Deltas
        are not logged (the assistant.message after them holds the same text), nor is a local model's progress
        (how a call went, not what happened)."""
        if isinstance(event, AssistantDelta | ModelProgress):
            return event
        if self._closed:
            raise ValueError(f"the session log {self.path} is closed")
        # token ids hold no text: only the rest is scanned (no getattr: a pydantic miss costs an exception)
        tokens = event.tokens if isinstance(event, AssistantMessage | ContextSummarized) else None
        line = event.model_dump_json(exclude={"tokens"} if tokens is not None else None)
        redacted = self.redactor.redact(line)
        changed = redacted != line
        if tokens is not None:
            redacted = redacted[:-1] + f',"tokens":{tokens.model_dump_json()}}}'
        self._write_line((redacted + "\n").encode("utf-8"))
        self._unsynced = True
        if not changed:
            return event
        try:
            return parse_event(redacted)
        except ValidationError:
            # redaction broke the line, which a resume will skip; the live state still takes the event
            return event

    def _write_line(self, data: bytes) -> None:
        """All of `data` or none of it: a short or failed write is cut off again."""
        if self._failure is not None:
            raise self._failure
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass  # the next open cuts the torn tail (repair_torn_tail)
            self._failure = _write_failed(self.path, exc, "write")
            raise self._failure from None
        self._size += len(data)

    def sync(self) -> None:
        """Make what was written durable (at turn boundaries); nothing to do when nothing was written since."""
        if self._unsynced and not self._closed:
            self._unsynced = False
            try:
                os.fsync(self._fd)
            except OSError as exc:
                raise _write_failed(self.path, exc, "save") from None

    def sync_soon(self) -> None:
        """`sync` in a worker thread: what was written is made durable without the event loop waiting on the
        disk (many sessions finishing together would otherwise stall on fsyncs); `close` reports a failure."""
        if not self._unsynced or self._closed:
            return
        self._unsynced = False
        previous = self._syncing
        self._syncing = _sync_pool().submit(_fsync_after, previous, self._fd, self.path)

    async def aclose(self) -> None:
        """`close`, once a pending background sync is done (waited for without blocking the loop)."""
        if self._syncing is not None:
            await asyncio.wait([asyncio.wrap_future(self._syncing)])
        self.close()

    def close(self) -> None:
        """Sync, close and let go of the session; raises SessionLogError when the log could not be saved."""
        if self._closed:
            return
        try:
            if self._syncing is not None:
                syncing, self._syncing = self._syncing, None
                syncing.result()
            self.sync()
        finally:
            self._closed = True
            os.close(self._fd)
            if self._lock is not None:
                os.close(self._lock)
                self._lock = None


@cache
def _sync_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="keel-log-sync")


def _fsync_after(previous: Future[None] | None, fd: int, path: Path) -> None:
    if previous is not None:
        previous.result()
    try:
        os.fsync(fd)
    except OSError as exc:
        raise _write_failed(path, exc, "save") from None


def repair_torn_tail(path: Path) -> None:
    """Cut a last line left half-written by a crash, so the log reads and appends cleanly."""
    if not path.exists():
        return
    with open(path, "rb+") as file:
        size = file.seek(0, os.SEEK_END)
        if size == 0:
            return
        file.seek(size - 1)
        if file.read(1) == b"\n":
            return
        cut = _last_newline_end(file, size)
        file.truncate(cut)


def _last_newline_end(file: BinaryIO, size: int) -> int:
    """The offset just past the last newline before `size` (0 with none), read backwards in blocks."""
    end = size
    while end > 0:
        start = max(0, end - 65536)
        file.seek(start)
        block: bytes = file.read(end - start)
        found = block.rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0


def read_events(path: Path) -> list[AnyEvent]:
    """Every event of a log, skipping a torn or unreadable line instead of failing; a line too long to load
    is read only in part and kept with its long text cut (keel.agent.core.log_lines)."""
    with open(path, "rb") as file:
        return read_line_events(file)


def find_session(session_id: str | None, cwd: Path | None = None) -> Path | None:
    """The log of a session by id or id prefix; with no id, the newest session started in cwd."""
    directory = sessions_dir()
    if not directory.is_dir():
        return None
    logs = sorted(directory.glob("*.jsonl"), reverse=True)
    if session_id:
        matches = [p for p in logs if p.stem.startswith(session_id)]
        return matches[0] if len(matches) == 1 else None
    for path in logs:
        started = first_event(path)
        if started is not None and (cwd is None or started.cwd == str(cwd)):
            return path
    return None


def first_event(path: Path) -> SessionStarted | None:
    with open(path, "rb") as file:
        line = file.readline(1 << 20)  # a first line longer than this is no session.started
    try:
        event = parse_event(line)
    except ValidationError:
        return None
    return event if isinstance(event, SessionStarted) else None
