"""A scripted, deterministic OpenAI-compatible chat server on 127.0.0.1 for keel's tests.

Replies come from a list (consumed in order, then a fallback) or from a responder callable; faults
(429, 500, 503, dropped connections) and a context limit are injected before the script is
consumed, so a retried request gets the same scripted reply. Every request is recorded.
Runnable by hand: `python -m keel.agent.harness.testing.scripted_server SCRIPT.json [--port N] [--fail-rate X]`.
"""

from __future__ import annotations

import argparse
import random
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from pydantic import TypeAdapter

from keel.agent.harness.testing.scripted_http import Outcome, ScriptedHandler, ScriptedHTTPServer
from keel.agent.harness.testing.scripted_tokens import (
    ReplyTokens,
)
from keel.agent.harness.testing.scripted_wire import (
    ChatRequest,
    RecordedRequest,
    Reply,
    ReplyLike,
    ScriptedToolCall,
    UsageOverride,
    as_reply,
)
from keel.agent.harness.testing.served_shapes import (
    ServerShape,
)

__all__ = [
    "ChatRequest",
    "RecordedRequest",
    "Reply",
    "ReplyTokens",
    "ScriptedServer",
    "ScriptedToolCall",
    "UsageOverride",
]

Responder = Callable[[ChatRequest], ReplyLike]


@dataclass
class ScriptedServer:
    """The server; use as a context manager or call start()/stop(). `url` ends in /v1.

    A responder runs under the server's lock: one call at a time, in arrival order.
    Fault kinds are HTTP statuses as strings ("429", "500", "503") or "drop".
    """

    script: Sequence[ReplyLike] | Responder = ()
    fallback: ReplyLike = "done"
    fail_rate: float = 0.0
    fault_kinds: Sequence[str] = ("429", "500", "drop")
    seed: int = 0
    context_limit: int | None = None
    model_name: str = "scripted-model"
    served_models: Sequence[str] | None = None  # what GET /v1/models lists (default: model_name)
    # what the server says about its model, as llama.cpp, vLLM or Ollama say it (agent/harness/testing/served_shapes.py)
    shape: ServerShape = "openai"
    model_params: int | None = None
    model_window: int | None = None
    text_chunk_chars: int = 8
    args_chunk_chars: int = 4
    reports_usage: bool = True  # False: a server that never reports usage, asked or not
    port: int = 0
    log: Callable[[str], None] | None = None
    requests: list[RecordedRequest] = field(default_factory=list, init=False)
    responder_errors: list[BaseException] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._rng = random.Random(self.seed)
        self._responder = self.script if callable(self.script) else None
        self._queue: deque[Reply] = deque(
            () if callable(self.script) else [as_reply(item) for item in self.script]
        )
        self._forced_faults: deque[str] = deque()
        _check_fault_kinds(self.fault_kinds)
        self._fallback = as_reply(self.fallback)
        self._served = 0
        self._httpd: ScriptedHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()  # ends stalled streams

    # ------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        httpd = ScriptedHTTPServer(("127.0.0.1", self.port), ScriptedHandler)
        httpd.scripted = self
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            open_connections = list(self._connections)
        for connection in open_connections:  # idle keep-alive connections would linger otherwise
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------ script control

    def add_replies(self, replies: Iterable[ReplyLike]) -> None:
        """Append replies to a list script (e.g. between two turns of a test)."""
        with self._lock:
            self._queue.extend(as_reply(item) for item in replies)

    def inject_faults(self, *kinds: str) -> None:
        """Fail the next requests with these faults, one each, before any scripted reply."""
        _check_fault_kinds(kinds)
        with self._lock:
            self._forced_faults.extend(kinds)

    @property
    def replies_left(self) -> int:
        return len(self._queue)

    @property
    def answered(self) -> list[RecordedRequest]:
        return [request for request in self.requests if request.answered]

    def _decide(self, record: RecordedRequest) -> Outcome | str:
        """Pick a fault kind, or consume the next scripted reply; never both."""
        with self._lock:
            self.requests.append(record)
            if self._forced_faults:
                record.fault = self._forced_faults.popleft()
                return record.fault
            if self.fail_rate and self._rng.random() < self.fail_rate:
                record.fault = self._rng.choice(list(self.fault_kinds))
                return record.fault
            if self.context_limit is not None and record.prompt_tokens > self.context_limit:
                record.fault = "context_length_exceeded"
                return record.fault
            if self._responder is not None:
                try:
                    request = ChatRequest.model_validate(record.body)
                    request.step, request.prompt_tokens = self._served, record.prompt_tokens
                    reply = as_reply(self._responder(request))
                except Exception as error:  # noqa: BLE001 -- a broken test script: 500, kept for the test
                    self.responder_errors.append(error)
                    record.fault = "responder_error"
                    return record.fault
            else:
                reply = self._queue.popleft() if self._queue else self._fallback
            self._served += 1
            record.answered, record.reply = True, reply
            return Outcome(reply, self._served)


def _check_fault_kinds(kinds: Iterable[str]) -> None:
    for kind in kinds:
        if kind != "drop" and not (kind.isdigit() and 400 <= int(kind) < 600):
            raise ValueError(
                f"unknown fault kind {kind!r}: use an HTTP status like '429' or 'drop'"
            )


def load_script(path: Path) -> list[Reply]:
    """Read a JSON list of replies (strings or objects in the Reply shape)."""
    items = TypeAdapter(list[Reply | str]).validate_json(path.read_text())
    return [as_reply(item) for item in items]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a scripted OpenAI-compatible chat model.")
    parser.add_argument("script", type=Path, help="a JSON list of replies")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--fail-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--context-limit", type=int, default=None)
    parser.add_argument("--fallback", default="done", help="the text reply once the script ends")
    parser.add_argument(
        "--shape",
        choices=("openai", "llama.cpp", "vllm", "ollama"),
        default="openai",
        help="what the server says about its model, as this kind of server says it",
    )
    parser.add_argument("--model-params", type=int, default=None, help="its parameter count")
    parser.add_argument("--model-window", type=int, default=None, help="the window it serves")
    options = parser.parse_args(argv)
    server = ScriptedServer(
        script=load_script(options.script),
        fallback=options.fallback,
        fail_rate=options.fail_rate,
        seed=options.seed,
        context_limit=options.context_limit,
        shape=options.shape,
        model_params=options.model_params,
        model_window=options.model_window,
        port=options.port,
        log=lambda line: print(line, file=sys.stderr, flush=True),
    )
    with server:
        print(server.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
