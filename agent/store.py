"""Session logs: one JSON line per event, appended and flushed before the event is published."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from keel.agent.config import keel_home
from keel.agent.model.redact import Redactor
from keel.agent.protocol import AnyEvent, AssistantDelta, ModelProgress, SessionStarted, parse_event


def sessions_dir() -> Path:
    return keel_home() / "sessions"


def new_session_id() -> str:
    """Sortable by time, unique across parallel agents."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class SessionLog:
    """The append-only event log of one session."""

    def __init__(self, path: Path, redactor: Redactor | None = None) -> None:
        self.path = path
        self.redactor = redactor or Redactor.from_environment()
        repair_torn_tail(path)
        try:
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - held for the session's life
        except FileNotFoundError:  # the first log in this home: make its directory
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115
        self._unsynced = False
        self._syncing: Future[None] | None = None

    def append(self, event: AnyEvent) -> AnyEvent:
        """Write one event and return it as logged: itself, or its redacted copy when it held a secret. Deltas
        are not logged (the assistant.message after them holds the same text), nor is a local model's progress
        (how a call went, not what happened)."""
        if isinstance(event, AssistantDelta | ModelProgress):
            return event
        tokens = getattr(event, "tokens", None)  # token ids hold no text: only the rest is scanned
        line = event.model_dump_json(exclude={"tokens"} if tokens is not None else None)
        redacted = self.redactor.redact(line)
        changed = redacted != line
        if tokens is not None:
            redacted = redacted[:-1] + f',"tokens":{tokens.model_dump_json()}}}'
        self._file.write(redacted + "\n")
        self._file.flush()
        self._unsynced = True
        if not changed:
            return event
        try:
            return parse_event(redacted)
        except ValidationError:
            # redaction broke the line, which a resume will skip; the live state still takes the event
            return event

    def sync(self) -> None:
        """Make what was written durable (at turn boundaries); nothing to do when nothing was written since."""
        if self._unsynced:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._unsynced = False

    def sync_soon(self) -> None:
        """`sync` in a worker thread: what was written is flushed now and made durable without the event
        loop waiting on the disk (many sessions finishing together would otherwise stall on fsyncs)."""
        if not self._unsynced:
            return
        self._file.flush()
        self._unsynced = False
        previous = self._syncing
        fd = self._file.fileno()
        self._syncing = _sync_pool().submit(_fsync_after, previous, fd)

    async def aclose(self) -> None:
        """`close`, once a pending background sync is done (waited for without blocking the loop)."""
        if self._syncing is not None:
            await asyncio.wrap_future(self._syncing)
        self.close()

    def close(self) -> None:
        if self._syncing is not None:
            self._syncing.result()
            self._syncing = None
        if not self._file.closed:
            self.sync()
            self._file.close()


@cache
def _sync_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="keel-log-sync")


def _fsync_after(previous: Future[None] | None, fd: int) -> None:
    if previous is not None:
        previous.result()
    os.fsync(fd)


def repair_torn_tail(path: Path) -> None:
    """Cut a last line left half-written by a crash, so the log reads and appends cleanly."""
    if not path.exists():
        return
    with open(path, "rb+") as file:
        data = file.read()
        if not data or data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        file.truncate(cut)


def read_events(path: Path) -> list[AnyEvent]:
    """Every event of a log, skipping a torn or unreadable line instead of failing."""
    events: list[AnyEvent] = []
    with open(path, "rb") as file:
        for line in file:
            if not line.strip():
                continue
            try:
                events.append(parse_event(line))
            except ValidationError:
                continue
    return events


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
        line = file.readline()
    try:
        event = parse_event(line)
    except ValidationError:
        return None
    return event if isinstance(event, SessionStarted) else None
