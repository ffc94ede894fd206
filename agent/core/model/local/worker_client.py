"""keel's side of the model worker: starts it, streams replies from it, and turns its death into one clear error.

The worker (keel.agent.core.model.local.worker) runs in its own session, so a Ctrl-C meant for keel never reaches it, and it
exits when keel closes its stdin or dies. A worker that dies mid-reply fails that reply with ModelWorkerDied;
the next request starts a new one.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from keel.agent.core.errors import ContextWindowExceeded, ProviderError
from keel.agent.core.model.local.assemble import LocalModelUnavailable
from keel.agent.core.model.local.llama_loading import EXTRA_BUFFERS_SETTING
from keel.agent.core.model.local.worker_protocol import (
    REPLY_ADAPTER,
    Cancel,
    Done,
    Failed,
    Generate,
    Hello,
    Piece,
    Progress,
    SamplingSpec,
    Unavailable,
    encode,
)
from keel.agent.core.protocol import ModelProgress

START_TIMEOUT = (
    120.0  # seconds for the worker to import llama.cpp and say hello (a cold disk is slow)
)
NATIVE_CRASHES = {signal.SIGSEGV, signal.SIGILL, signal.SIGBUS, signal.SIGFPE, signal.SIGABRT}
ProgressListener = Callable[[Progress], None]


class ModelWorkerDied(ProviderError):
    """The worker process died (a signal, out of memory); keel goes on and the next request starts a new one."""


@dataclass
class _Gone:
    """Put in a reply's queue when the worker is gone."""

    message: str


@dataclass
class _Pending:
    """One reply being received: where its messages go, and who hears its progress."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[Piece | Done | Failed | _Gone]
    on_progress: ProgressListener
    # the asking task's: its progress events carry the turn that asked (keel.agent.core.protocol.RUNNING_TURN)
    context: contextvars.Context = field(default_factory=contextvars.copy_context)


def describe_exit(returncode: int) -> str:
    """`SIGSEGV, segmentation fault` or `exit code 3`."""
    if returncode < 0:
        number = -returncode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"{name}, {(signal.strsignal(number) or 'signal').lower()}"
    return f"exit code {returncode}"


@dataclass
class _Process:
    """One running worker and what it has said."""

    popen: subprocess.Popen[bytes]
    hello: threading.Event = field(default_factory=threading.Event)
    said: Hello | Unavailable | None = None
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=200))
    gone: str | None = None
    ready: bool = False
    stopping: bool = False  # keel ended it: not a crash
    answered: bool = False  # it finished a reply


class ModelWorker:
    """One worker process for one embedded model's file and context size, shared by every session of this
    process."""

    def __init__(self, model: str, path: Path, context_window: int) -> None:
        self.model = model
        self.path = path
        self.context_window = context_window
        self._process: _Process | None = None
        self._pending: dict[int, _Pending] = {}
        self._listeners: list[ProgressListener] = []
        self._stage: Progress | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._plain_buffers = (
            False  # after a native crash before any reply: load without extra buffers
        )

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.popen.pid if process is not None and process.gone is None else None

    def listen(self, listener: ProgressListener) -> None:
        """Hear the stages of getting ready (assembling, loading), until the worker says it is ready."""
        self._listeners.append(listener)

    def start(self) -> None:
        """A running worker, started if there is none (blocks until it says hello); LocalModelUnavailable
        when it cannot serve the model here."""
        with self._lock:
            process = self._process
            if process is None or process.gone is not None:
                self._stage = None
                process = self._process = self._spawn()
        if not process.hello.wait(START_TIMEOUT):
            self._stop(process)
            raise ModelWorkerDied(
                f"the embedded model's worker did not start within {START_TIMEOUT:.0f} s",
                "ModelWorkerDied",
            )
        if isinstance(process.said, Unavailable):
            raise LocalModelUnavailable(process.said.message)
        if process.said is None:
            raise ModelWorkerDied(
                process.gone or "the embedded model's worker ended", "ModelWorkerDied"
            )

    def _spawn(self) -> _Process:
        argv = [
            sys.executable,
            "-m",
            "keel.agent.core.model.local.worker",
            "--embedded",
            self.model,
            "--model",
            str(self.path),
            "--context",
            str(self.context_window),
        ]
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=_worker_environment(self._plain_buffers),
        )
        process = _Process(popen)
        assert popen.stdout is not None and popen.stderr is not None
        threading.Thread(
            target=self._read_replies,
            args=(process, popen.stdout),
            daemon=True,
            name="keel-model-worker",
        ).start()
        threading.Thread(
            target=_keep_tail,
            args=(popen.stderr, process.stderr_tail),
            daemon=True,
            name="keel-model-worker-stderr",
        ).start()
        return process

    def _read_replies(self, process: _Process, stdout: IO[bytes]) -> None:
        try:
            for line in stdout:
                try:
                    message = REPLY_ADAPTER.validate_json(line)
                except ValueError:  # not the protocol: keep it with what the worker said on stderr
                    process.stderr_tail.append(line.decode("utf-8", "replace").rstrip())
                    continue
                if isinstance(message, Hello | Unavailable):
                    process.said = process.said or message
                    process.hello.set()
                if isinstance(message, Progress):
                    self._progress(process, message)
                elif isinstance(message, Piece | Done | Failed):
                    process.answered = process.answered or isinstance(message, Done)
                    self._deliver(message.id, message)
        finally:
            self._ended(process)

    def _progress(self, process: _Process, message: Progress) -> None:
        if message.id is not None:
            pending = self._pending.get(message.id)
            if pending is not None:
                pending.loop.call_soon_threadsafe(
                    pending.on_progress, message, context=pending.context
                )
            return
        process.ready = message.stage == "ready"
        self._stage = message
        for listener in list(self._listeners):
            listener(message)
        if process.ready:
            self._listeners.clear()
        for pending in list(self._pending.values()):
            pending.loop.call_soon_threadsafe(pending.on_progress, message, context=pending.context)

    def _deliver(self, reply_id: int, message: Piece | Done | Failed | _Gone) -> None:
        pending = self._pending.get(reply_id)
        if pending is not None:
            pending.loop.call_soon_threadsafe(pending.queue.put_nowait, message)

    def _ended(self, process: _Process) -> None:
        """The worker's stdout closed: it exited or was killed. Every reply still open fails, once."""
        returncode = process.popen.wait()
        last_words = _last_words(process.stderr_tail) if returncode else ""
        process.gone = f"the embedded model's worker process died ({describe_exit(returncode)})" + (
            f"; it said: {last_words}" if last_words else ""
        )
        process.hello.set()
        if returncode and not process.stopping:
            record_crash(self.path, process.gone, list(process.stderr_tail))
        if -returncode in NATIVE_CRASHES and not (
            process.answered or process.stopping or self._plain_buffers
        ):
            # llama.cpp died in native code before its first reply, as it does in the AMX path that its
            # extra weight buffers lead to: the next worker loads the model without them
            self._plain_buffers = True
            process.gone += (
                "; the next worker loads the model without llama.cpp's extra weight buffers"
            )
        for reply_id in list(self._pending):
            self._deliver(reply_id, _Gone(process.gone))

    async def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        sampling: SamplingSpec,
        on_piece: Callable[[str], None],
        on_progress: ProgressListener,
    ) -> Done:
        """One reply: pieces to on_piece as they come, then its Done. Raises ModelWorkerDied,
        ContextWindowExceeded, or ProviderError for a reply the worker could not make."""
        process = self._process
        if process is None or process.gone is not None or process.said is None:
            try:
                await asyncio.to_thread(self.start)
            except LocalModelUnavailable as exc:
                raise ProviderError(str(exc), "LocalModelUnavailable") from None
            process = self._process
        assert process is not None
        if not process.ready and self._stage is not None:
            on_progress(self._stage)  # what it is busy with now, for a front end that joined late
        reply_id = next(self._ids)
        pending = _Pending(asyncio.get_running_loop(), asyncio.Queue(), on_progress)
        self._pending[reply_id] = pending
        finished = False
        try:
            self._send(
                process, Generate(id=reply_id, messages=messages, tools=tools, sampling=sampling)
            )
            while True:
                message = await pending.queue.get()
                if isinstance(message, Piece):
                    on_piece(message.text)
                    continue
                finished = True
                if isinstance(message, Done):
                    return message
                raise _error_of(message)
        finally:
            self._pending.pop(reply_id, None)
            if not finished and process.gone is None:
                self._send(process, Cancel(id=reply_id))

    def _send(self, process: _Process, message: Generate | Cancel) -> None:
        stdin = process.popen.stdin
        assert stdin is not None
        try:
            with self._lock:
                stdin.write(encode(message))
                stdin.flush()
        except (BrokenPipeError, ValueError):
            process.popen.wait()
            self._deliver(
                getattr(message, "id", 0),
                _Gone(process.gone or "the embedded model's worker is gone"),
            )

    def stop(self) -> None:
        """End the worker (keel exits, or the model changes)."""
        if self._process is not None:
            self._stop(self._process)

    @staticmethod
    def _stop(process: _Process) -> None:
        """Close its stdin (it exits at once), and kill it if it has not after a few seconds."""
        process.stopping = True
        if process.popen.stdin is not None:
            with suppress(OSError):
                process.popen.stdin.close()
        try:
            process.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.popen.kill()
            process.popen.wait()


def _error_of(message: Failed | _Gone) -> ProviderError:
    if isinstance(message, _Gone):
        return ModelWorkerDied(
            f"{message.message}; keel is unharmed and starts a new worker for the next request",
            "ModelWorkerDied",
        )
    if message.kind == "prompt_too_long":
        return ContextWindowExceeded(message.message, "ContextWindowExceededError")
    if message.kind == "unavailable":
        return ProviderError(message.message, "LocalModelUnavailable")
    return ProviderError(f"the embedded model failed: {message.message}", "LocalModelError")


_NOT_WORDS = ("File ", "Thread 0x", "Current thread", "Extension modules", "Stack (most recent")


def _last_words(stderr_tail: deque[str]) -> str:
    """What a dying worker said that a person can use: Python's fatal error line, else its last message
    (not a traceback frame)."""
    lines = [line.strip() for line in stderr_tail if line.strip()]
    fatal = [line for line in lines if line.startswith("Fatal Python error")]
    said = [line for line in lines if not line.startswith(_NOT_WORDS)]
    return (fatal or said or [""])[-1]


def progress_event(message: Progress) -> ModelProgress:
    """The worker's progress as the event front ends show."""
    return ModelProgress(
        stage=message.stage, done=message.done, total=message.total, message=message.message
    )


def _keep_tail(stream: IO[bytes], tail: deque[str]) -> None:
    for line in stream:
        tail.append(line.decode("utf-8", "replace").rstrip())


def _worker_environment(plain_buffers: bool) -> dict[str, str]:
    """The worker's environment is keel's; with plain_buffers it loads the model without extra weight buffers,
    unless the person chose otherwise."""
    environment = dict(os.environ)
    if plain_buffers:
        environment.setdefault(EXTRA_BUFFERS_SETTING, "0")
    return environment


class WorkerCrash(BaseModel):
    """The last time a worker died, kept beside the model for `keel models` and for a bug report."""

    time: str
    what: str
    stderr: list[str] = []


def _crash_record_path(model: Path) -> Path:
    """Beside the model file, one record per model."""
    return model.with_name(f"{model.stem}.worker-crash.json")


def record_crash(model: Path, what: str, stderr_tail: list[str]) -> None:
    crash = WorkerCrash(
        time=time.strftime("%Y-%m-%d %H:%M:%S"), what=what, stderr=stderr_tail[-60:]
    )
    with suppress(OSError):  # the crash is reported to the session all the same
        _crash_record_path(model).write_text(crash.model_dump_json(indent=1))


def last_crash(model: Path) -> WorkerCrash | None:
    """The worker crash last recorded for this model file, if any."""
    try:
        return WorkerCrash.model_validate_json(_crash_record_path(model).read_text())
    except (OSError, ValueError):
        return None
