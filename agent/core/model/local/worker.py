"""The model worker: a child process that owns llama.cpp, so a crash in native code never takes keel down.

Run as `python -m keel.agent.core.model.local.worker --embedded NAME --model PATH --context N` by
keel.agent.core.model.local.worker_client, as Ollama runs its runner. Requests arrive on stdin, replies leave on a
private copy of stdout (fd 1 itself is pointed at stderr, so nothing llama.cpp prints can corrupt the
protocol); stderr is kept by keel for crash reports.
The worker exits when its stdin closes: it never outlives keel.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import os
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from keel.agent.core.model.local.assemble import (
    LocalModelUnavailable,
    ensure_model_file,
    model_problem,
)
from keel.agent.core.model.local.catalog import EmbeddedModel, embedded_model
from keel.agent.core.model.local.compact_tools import compact_tool_schemas
from keel.agent.core.model.local.engine import (
    LocalEngine,
    PromptTooLong,
    Sampling,
    import_llama_cpp,
)
from keel.agent.core.model.local.model_file import LLAMA_INSTALL_HINT, file_problem
from keel.agent.core.model.local.names import file_of
from keel.agent.core.model.local.turn import LocalTurn
from keel.agent.core.model.local.worker_protocol import (
    REQUEST_ADAPTER,
    CallMade,
    Cancel,
    Done,
    Failed,
    Generate,
    Hello,
    Piece,
    Progress,
    Request,
    Unavailable,
    encode,
)


class Channel:
    """The protocol's way out: whole lines, one writer at a time (replies come from the loop and a thread)."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._lock = threading.Lock()

    def send(self, message: Hello | Unavailable | Progress | Piece | Done | Failed) -> None:
        with self._lock:
            self._out.write(encode(message))
            self._out.flush()


def private_stdout() -> BinaryIO:
    """A copy of stdout for the protocol; fd 1 then goes to stderr."""
    protocol = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


def sampling_of(request: Generate) -> Sampling:
    """The reply's sampling; greedy unless keel asked for a temperature (or KEEL_LOCAL_TEMPERATURE set one),
    with the seed keel asked for, else KEEL_LOCAL_SEED's, else llama.cpp's fixed default."""
    spec = request.sampling
    sampling = Sampling(max_tokens=spec.max_tokens, prose_only=spec.prose_only)
    if spec.seed is not None:
        sampling = replace(sampling, seed=spec.seed)
    return sampling if spec.temperature is None else replace(sampling, temperature=spec.temperature)


class Worker:
    """Serves one model file: made ready once, then one reply per Generate, cancelled by Cancel. `model` is
    the catalog's entry, assembled first if need be; None for a user's own GGUF file, loaded as it is."""

    def __init__(
        self, channel: Channel, model: EmbeddedModel | None, path: Path, context_tokens: int
    ) -> None:
        self.channel = channel
        self.model = model
        self.path = path
        self.engine = LocalEngine(path, context_tokens=context_tokens)
        self.replies: dict[int, asyncio.Task[None]] = {}
        self.unavailable: str | None = None

    async def serve(self, requests: asyncio.Queue[Request]) -> None:
        ready = asyncio.create_task(self._get_ready())
        while True:
            request = await requests.get()
            if isinstance(request, Cancel):
                task = self.replies.get(request.id)
                if task is not None:
                    task.cancel()
                continue
            self.replies[request.id] = asyncio.create_task(self._reply(request, ready))

    async def _get_ready(self) -> None:
        """Assemble the file if needed, then load it; every stage is announced."""

        def assembling(message: str) -> None:
            self.channel.send(Progress(stage="assembling", message=message.removeprefix("keel: ")))

        try:
            if self.model is not None:
                await asyncio.to_thread(ensure_model_file, assembling, self.path, self.model)
            self.channel.send(Progress(stage="loading", message=f"loading {self.path.name}"))
            await self.engine.ready()
        except LocalModelUnavailable as exc:
            self.unavailable = str(exc)
            self.channel.send(Unavailable(message=self.unavailable))
            return
        aside = (
            ""
            if self.engine.extra_buffers
            else " (llama.cpp's extra weight buffers off: prompts read slower)"
        )
        what = "the embedded model" if self.model is not None else self.path.name
        self.channel.send(Progress(stage="ready", message=f"{what} is ready{aside}"))

    async def _reply(self, request: Generate, ready: asyncio.Task[None]) -> None:
        try:
            await asyncio.shield(ready)
            if self.unavailable is not None:
                self.channel.send(
                    Failed(id=request.id, kind="unavailable", message=self.unavailable)
                )
                return
            await self._generate(request)
        except asyncio.CancelledError:
            pass  # keel stopped listening: nothing more to say about this reply
        except PromptTooLong as exc:
            self.channel.send(Failed(id=request.id, kind="prompt_too_long", message=str(exc)))
        except Exception as exc:  # noqa: BLE001 - reported to keel as this reply's failure; the worker goes on
            self.channel.send(
                Failed(id=request.id, kind="error", message=f"{type(exc).__name__}: {exc}")
            )
        finally:
            self.replies.pop(request.id, None)

    async def _generate(self, request: Generate) -> None:
        tools = compact_tool_schemas(request.tools) if request.tools else None

        def reading(done: int, total: int) -> None:
            self.channel.send(Progress(stage="prompt", id=request.id, done=done, total=total))

        turn = LocalTurn(
            self.engine,
            request.messages,
            tools,
            sampling_of(request),
            reading,
            record_tokens=request.sampling.record_tokens,
        )
        async for text in turn.prose():
            self.channel.send(Piece(id=request.id, text=text))
        counts = turn.counts
        self.channel.send(
            Done(
                id=request.id,
                calls=[CallMade(name=call.name, arguments=call.arguments) for call in turn.calls],
                prompt_tokens=counts.prompt_tokens,
                completion_tokens=counts.completion_tokens,
                finish_reason="tool_calls" if turn.calls else counts.finish_reason,
                tokens=turn.tokens,
            )
        )


def read_requests(loop: asyncio.AbstractEventLoop, requests: asyncio.Queue[Request]) -> None:
    """Feed stdin's lines to the loop; when keel closes the pipe (or is gone), exit at once."""
    for line in sys.stdin.buffer:
        if line.strip():
            loop.call_soon_threadsafe(requests.put_nowait, REQUEST_ADAPTER.validate_json(line))
    os._exit(0)


async def serve(
    channel: Channel, model: EmbeddedModel | None, path: Path, context_tokens: int
) -> None:
    requests: asyncio.Queue[Request] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    threading.Thread(
        target=read_requests, args=(loop, requests), name="keel-worker-stdin", daemon=True
    ).start()
    await Worker(channel, model, path, context_tokens).serve(requests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m keel.agent.core.model.local.worker", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--embedded",
        required=True,
        help="the embedded model the file is (keel-local/NAME), or keel-local/<path> for a GGUF file",
    )
    parser.add_argument("--model", type=Path, required=True, help="the GGUF file")
    parser.add_argument("--context", type=int, required=True, help="context window in tokens")
    options = parser.parse_args(argv)
    channel = Channel(private_stdout())
    faulthandler.enable()  # a fatal signal leaves its traceback on stderr, which keel keeps
    model = None if file_of(options.embedded) is not None else embedded_model(options.embedded)
    try:
        llama_cpp = import_llama_cpp(model.install_hint if model else LLAMA_INSTALL_HINT)
        problem = model_problem(options.model, model) if model else file_problem(options.model)
    except LocalModelUnavailable as exc:
        problem = str(exc)
    if problem:
        channel.send(Unavailable(message=problem))
        return 0
    channel.send(Hello(pid=os.getpid(), llama_cpp_version=getattr(llama_cpp, "__version__", "?")))
    asyncio.run(serve(channel, model, options.model, options.context))
    return 0


if __name__ == "__main__":
    sys.exit(main())
