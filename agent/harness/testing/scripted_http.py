"""The HTTP side of the scripted server (scripted_server.py): routes, faults, streamed and whole replies."""

from __future__ import annotations

import json
import select
import socket
import sys
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from keel.agent.harness.testing.scripted_tokens import TokensAsked, add_to_completion, add_to_stream
from keel.agent.harness.testing.scripted_wire import (
    RecordedRequest,
    Reply,
    completion_body,
    context_length_body,
    error_body,
    estimate_prompt_tokens,
    stream_chunks,
)
from keel.agent.harness.testing.served_shapes import llama_cpp_props, models_listing, ollama_show

if TYPE_CHECKING:
    from keel.agent.harness.testing.scripted_server import ScriptedServer

DEFAULT_CONTEXT_LIMIT = 32_768  # what a scripted 400 reports when the server has no context_limit


@dataclass
class Outcome:
    """The server's decision for one request, made under the lock."""

    reply: Reply
    response_number: int


class ScriptedHTTPServer(ThreadingHTTPServer):
    """The HTTP server under a ScriptedServer; many agents may connect to it at once."""

    daemon_threads = True
    request_queue_size = 64  # many parallel agents may connect at once
    scripted: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)  # hang-ups are expected, bugs are not


class ScriptedHandler(BaseHTTPRequestHandler):
    """One connection: routes a request to the scripted server's decision and sends it, streamed or not."""

    server: ScriptedHTTPServer

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
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = RecordedRequest(self.path, body, prompt_tokens, headers=headers)
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

    def _send_reply(self, outcome: Outcome, body: dict[str, Any], prompt_tokens: int) -> None:
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
                self._send_json(200, response, reply.headers, cut_after=reply.drop_after_chunks)

    def _stream(
        self, outcome: Outcome, body: dict[str, Any], model: str, prompt_tokens: int
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
        for name, value in reply.headers.items():
            self.send_header(name, value)
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
