"""A scripted, deterministic OpenAI-compatible chat server on 127.0.0.1 for keel's tests.

Replies come from a list (consumed in order, then a fallback) or from a responder callable; faults
(429, 500, 503, dropped connections) and a context limit are injected before the script is
consumed, so a retried request gets the same scripted reply. Every request is recorded.
Runnable by hand: `python -m keel.agent.testing.scripted_server SCRIPT.json [--port N] [--fail-rate X]`.
"""

from __future__ import annotations

import argparse
import json
import random
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from pydantic import TypeAdapter

from keel.agent.testing.scripted_tokens import (
    ReplyTokens,
    TokensAsked,
    add_to_completion,
    add_to_stream,
)
from keel.agent.testing.scripted_wire import (
    ChatRequest,
    RecordedRequest,
    Reply,
    ReplyLike,
    ScriptedToolCall,
    UsageOverride,
    as_reply,
    completion_body,
    context_length_body,
    error_body,
    estimate_prompt_tokens,
    stream_chunks,
)
from keel.agent.testing.served_shapes import (
    ServerShape,
    llama_cpp_props,
    models_listing,
    ollama_show,
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
DEFAULT_CONTEXT_LIMIT = 32_768  # what a scripted 400 reports when the server has no context_limit


@dataclass
class _Outcome:
    """The server's decision for one request, made under the lock."""

    reply: Reply
    response_number: int


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
    # what the server says about its model, as llama.cpp, vLLM or Ollama say it (agent/testing/served_shapes.py)
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
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()  # ends stalled streams

    # ------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        httpd = _HTTPServer(("127.0.0.1", self.port), _Handler)
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

    def _decide(self, record: RecordedRequest) -> _Outcome | str:
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
            return _Outcome(reply, self._served)


def _check_fault_kinds(kinds: Iterable[str]) -> None:
    for kind in kinds:
        if kind != "drop" and not (kind.isdigit() and 400 <= int(kind) < 600):
            raise ValueError(
                f"unknown fault kind {kind!r}: use an HTTP status like '429' or 'drop'"
            )


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # many parallel agents may connect at once
    scripted: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)  # hang-ups are expected, bugs are not


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    disable_nagle_algorithm = True  # small writes would otherwise wait on delayed ACKs
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streaming, as real providers do
    timeout = 120  # an idle keep-alive connection is closed after this many seconds
    server_version = "scripted-openai/1.0"

    @property
    def scripted(self) -> ScriptedServer:
        return self.server.scripted

    def setup(self) -> None:
        super().setup()
        with self.scripted._lock:
            self.scripted._connections.add(self.connection)

    def finish(self) -> None:
        with self.scripted._lock:
            self.scripted._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # ------------------------------------------------------------ routes

    def do_GET(self) -> None:
        if self.path.split("?")[0].rstrip("/") in ("/v1/models", "/models"):
            scripted = self.scripted
            served = scripted.served_models
            names = served if served is not None else [scripted.model_name]
            listing = models_listing(
                scripted.shape, names, scripted.model_params, scripted.model_window
            )
            self._send_json(200, listing)
        elif self.path.rstrip("/") == "/props" and self.scripted.shape == "llama.cpp":
            self._send_json(200, llama_cpp_props(self.scripted.model_window))
        else:
            self._send_json(404, error_body(404, f"No route for GET {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.split("?")[0].rstrip("/") == "/api/show" and self.scripted.shape == "ollama":
            scripted = self.scripted
            name = str(json.loads(raw or b"{}").get("model", ""))
            self._send_json(200, ollama_show(name, scripted.model_params, scripted.model_window))
            return
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, error_body(404, f"No route for POST {self.path}"))
            return
        try:
            body = json.loads(raw)
            assert isinstance(body, dict)
        except (ValueError, AssertionError):
            self._send_json(400, error_body(400, "The request body is not a JSON object."))
            return
        prompt_tokens = estimate_prompt_tokens(body)
        record = RecordedRequest(self.path, body, prompt_tokens)
        outcome = self.scripted._decide(record)
        self._log(record)
        if isinstance(outcome, str):
            self._send_fault(outcome, prompt_tokens)
        else:
            self._send_reply(outcome, body, prompt_tokens)

    # ------------------------------------------------------------ responses

    def _send_fault(self, kind: str, prompt_tokens: int) -> None:
        if kind == "drop":
            self._drop()
        elif kind == "responder_error":
            error = self.scripted.responder_errors[-1]
            self._send_json(500, error_body(500, f"responder raised {error!r}"))
        elif kind == "context_length_exceeded":
            limit = self.scripted.context_limit or DEFAULT_CONTEXT_LIMIT
            self._send_json(400, context_length_body(limit, prompt_tokens))
        else:
            self._send_json(int(kind), error_body(int(kind)))

    def _send_reply(self, outcome: _Outcome, body: dict[str, Any], prompt_tokens: int) -> None:
        reply = outcome.reply
        if reply.delay:
            time.sleep(reply.delay)
        if reply.drop:
            self._drop()
        elif reply.error == 400 and reply.error_message is None:
            limit = self.scripted.context_limit or DEFAULT_CONTEXT_LIMIT
            self._send_json(400, context_length_body(limit, max(prompt_tokens, limit + 1)))
        elif reply.error is not None:
            headers = {"Retry-After": f"{reply.retry_after:g}"} if reply.retry_after else {}
            self._send_json(reply.error, error_body(reply.error, reply.error_message), headers)
        else:
            model = body.get("model") or self.scripted.model_name
            if body.get("stream"):
                self._stream(outcome, body, model, prompt_tokens)
            else:
                response = completion_body(reply, model, outcome.response_number, prompt_tokens)
                add_to_completion(response, reply.tokens, TokensAsked.of(body))
                self._send_json(200, response, cut_after=reply.drop_after_chunks)

    def _stream(
        self, outcome: _Outcome, body: dict[str, Any], model: str, prompt_tokens: int
    ) -> None:
        reply, server = outcome.reply, self.scripted
        asked = bool((body.get("stream_options") or {}).get("include_usage"))
        include_usage = asked and server.reports_usage
        chunks = stream_chunks(
            reply,
            model,
            outcome.response_number,
            prompt_tokens,
            include_usage,
            server.text_chunk_chars,
            server.args_chunk_chars,
        )
        add_to_stream(chunks, reply.tokens, TokensAsked.of(body))
        events = [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks]
        events.append(b"data: [DONE]\n\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if reply.drop_after_chunks is not None:
            events = events[: reply.drop_after_chunks]
        if reply.stall_after_chunks is not None:
            events = events[: reply.stall_after_chunks]
        framed = [b"%x\r\n%s\r\n" % (len(event), event) for event in events]
        if reply.chunk_delay:
            for frame in framed:
                self.wfile.write(frame)
                time.sleep(reply.chunk_delay)
        else:
            self.wfile.write(b"".join(framed))
        if reply.drop_after_chunks is not None:
            self._drop()
        elif reply.stall_after_chunks is not None:
            self._stall()
        else:
            self.wfile.write(b"0\r\n\r\n")

    def _send_json(
        self,
        status: int,
        payload: dict[str, Any],
        headers: dict[str, str] | None = None,
        cut_after: int | None = None,
    ) -> None:
        """Send a JSON response; `cut_after` N sends only N/(N+1) of the body, then drops."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if cut_after is None:
            self.wfile.write(data)
        else:
            self.wfile.write(data[: len(data) * cut_after // (cut_after + 1)])
            self._drop()

    def _stall(self) -> None:
        """Send nothing more, the connection left open, until the client hangs up or the server stops."""
        self.wfile.flush()
        self.close_connection = True
        while not self.scripted._stopping.wait(0.05):
            try:
                readable, _, _ = select.select([self.connection], [], [], 0)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return  # the client gave up and closed its end
            except OSError:
                return

    def _drop(self) -> None:
        """Close the connection at once, mid-response or before any; the client sees EOF."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _log(self, record: RecordedRequest) -> None:
        if self.scripted.log is None:
            return
        what = record.reply.model_dump_json(exclude_defaults=True) if record.reply else record.fault
        number = self.scripted.requests.index(record) + 1
        self.scripted.log(f"#{number} ({record.prompt_tokens} prompt tokens) -> {what}"[:300])


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
