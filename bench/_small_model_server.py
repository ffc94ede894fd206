"""One OpenAI-compatible server for the embedded model, shared by every mode of the small-model benchmark
when peers run: the peers only speak HTTP, and the one-shot and keel modes must then reach the model the
same way for the comparison to be fair.

keel has no serving command of its own, so this is keel's embedded model (its worker process, through
ModelClient: the same chat template, tool prompt and reply reading as `keel run` gets) behind the HTTP
layer of keel's scripted server, on 127.0.0.1. One request at a time: there is one model process.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Self

from keel.agent.core.model.client import ModelClient
from keel.agent.core.model.local.catalog import embedded_model
from keel.agent.core.model.local.names import file_of
from keel.agent.core.model.reply import ModelReply
from keel.agent.core.model.sampling import CallSampling
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedServer
from keel.agent.harness.testing.scripted_wire import ScriptedToolCall, UsageOverride

REQUEST_TIMEOUT = 1800.0  # seconds for one reply of a small model on two shared cores
# a request that sets no reply limit may fill the rest of the window, as with llama.cpp's server
# (keel's embedded default of 1,024 cut aider's whole files short; the engine caps it at the room left)
NO_LIMIT = 1 << 20
GGUF_WINDOW = 16_384  # the window a GGUF file of the user's is served with


def header_facts(model: str) -> tuple[int | None, int]:
    """The parameters the model's GGUF header counts (None if unreadable) and the window it is served with:
    what llama.cpp's server says of its model (`/v1/models` meta.n_params, `/props` n_ctx)."""
    from keel.agent.core.model.local.gguf_file import NotGguf, gguf_info
    from keel.agent.core.model.local.model_file import resolve_file

    path = file_of(model)
    if path is None:
        from keel.agent.core.model.local.assemble import ensure_model_file

        known = embedded_model(model)
        # on a first run the file is not assembled yet: its header would be unreadable, the size unsaid
        file = ensure_model_file(lambda message: print(message, flush=True), model=known)
        window = known.context_window
    else:
        file, window = resolve_file(path), GGUF_WINDOW
    try:
        return gguf_info(file).parameters, window
    except (OSError, NotGguf):
        return None, window


def served_name(model: str) -> str:
    """The name the server lists for the embedded model `model` (its catalog name: it says the size,
    as a user's own server would, e.g. qwen2.5-coder-1.5b-instruct; a GGUF file's stem)."""
    path = file_of(model)
    return Path(path).stem if path is not None else embedded_model(model).name


def as_reply(reply: ModelReply) -> Reply:
    """The model's reply as the HTTP layer sends it: text, tool calls with their ids, real usage."""
    return Reply(
        text=reply.text,
        tool_calls=[
            ScriptedToolCall(name=call.name, arguments=call.arguments or "{}", id=call.id or None)
            for call in reply.tool_calls
        ],
        finish_reason=reply.finish_reason,
        usage=UsageOverride(
            prompt_tokens=reply.usage.prompt_tokens,
            completion_tokens=reply.usage.completion_tokens,
            total_tokens=reply.usage.total_tokens,
        ),
    )


def sampling_of(request: ChatRequest) -> CallSampling | None:
    """The temperature and seed a request asks for, which llama.cpp's server honours over its own (None:
    neither asked, the server's sampling)."""
    extra: dict[str, Any] = request.model_extra or {}
    asked = {key: extra[key] for key in ("temperature", "seed") if extra.get(key) is not None}
    return CallSampling.model_validate(asked) if asked else None


def attempt_seed(attempt: int, request: int) -> int:
    """The seed of an attempt's n-th request that names none: a new one for every request, the same on a replay."""
    return attempt * 100_000 + request


def max_tokens_of(request: ChatRequest) -> int:
    """The reply limit a request asks for, under either of OpenAI's names (NO_LIMIT: none asked)."""
    extra: dict[str, Any] = request.model_extra or {}
    value = extra.get("max_completion_tokens") or extra.get("max_tokens")
    return int(value) if value else NO_LIMIT


class EmbeddedServer:
    """The embedded model `model` served at `url` (…/v1) as `name`, sampling at `temperature`. Served `as_name`
    (a name that says nothing of its size, as a user's llama.cpp server often has it), it answers `/v1/models`
    and `/props` as llama.cpp's server does, so a client learns the size only from the server."""

    def __init__(
        self,
        model: str,
        temperature: float,
        as_name: str | None = None,
        client: ModelClient | None = None,
    ) -> None:
        # `client` reaches the model (default: keel's embedded `model`; in tests, a scripted server)
        self.name = as_name or served_name(model)
        self.client = client or ModelClient(model=model, extra={"temperature": temperature})
        self.making: Future[ModelReply] | None = None  # the reply being made now
        self.attempt, self.asked = 1, 0  # the attempt under way and its requests so far
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.lock = threading.Lock()
        self.tokens = 0  # prompt and reply tokens of every reply so far
        params, window = header_facts(model) if as_name else (None, None)
        shape = "llama.cpp" if as_name else "openai"
        self.server = ScriptedServer(
            script=self.respond,
            model_name=self.name,
            shape=shape,
            model_params=params,
            model_window=window,
        )

    @property
    def url(self) -> str:
        """The base URL clients are given."""
        return self.server.url

    def call(self, request: ChatRequest) -> Future[ModelReply]:
        """The model's reply to `request`, computed on the server's own event loop, seeded anew (as
        llama.cpp's server draws a seed for each request) unless the request names its seed."""
        self.asked += 1
        asked = sampling_of(request) or CallSampling()
        if asked.seed is None:
            asked = asked.model_copy(update={"seed": attempt_seed(self.attempt, self.asked)})
        messages, tools = request.messages, request.tools or None
        reply = self.client.complete(
            messages, tools, lambda _text: None, max_tokens_of(request), asked
        )
        return asyncio.run_coroutine_threadsafe(reply, self.loop)

    def respond(self, request: ChatRequest) -> Reply:
        """One request, after the one before it; a failed call is a 500 with its message."""
        with self.lock:
            self.making = self.call(request)
            try:
                reply = self.making.result(timeout=REQUEST_TIMEOUT)
                self.tokens += reply.usage.total_tokens
                return as_reply(reply)
            except Exception as exc:  # noqa: BLE001 - the client gets the error, the server goes on
                return Reply(error=500, error_message=f"{type(exc).__name__}: {exc}")
            finally:
                self.making = None

    def tokens_served(self) -> int:
        """The prompt and reply tokens of every reply answered so far."""
        return self.tokens

    def begin_attempt(self, attempt: int) -> None:
        """Before an attempt: the last one's reply stopped if it is still being made, and the seeds of this
        one's requests drawn from its number (the repeats of a task then differ, and a run replays)."""
        self.wait_idle()
        self.attempt, self.asked = attempt, 0

    def wait_idle(self) -> None:
        """Stop the reply being made, if any, and return once the model is idle: called between attempts, when
        the client that asked for it (an attempt stopped at its timeout) is gone, so that it takes none of the
        next attempt's time nor the machine's."""
        if (making := self.making) is not None:
            making.cancel()  # the model worker is told to stop decoding
        with self.lock:
            pass

    def __enter__(self) -> Self:
        self.thread.start()
        self.server.start()
        print(f"serving {self.name} (keel's embedded model) at {self.url}", flush=True)
        return self

    def __exit__(self, *exc: object) -> None:
        from keel.agent.core.model.local.endpoint import stop_workers

        self.server.stop()
        asyncio.run_coroutine_threadsafe(self.client.aclose(), self.loop).result(timeout=30)
        stop_workers()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
