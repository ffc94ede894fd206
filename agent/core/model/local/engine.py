"""The embedded model inside its worker process: llama-cpp-python, the model's own chat template with tools,
async streaming, and progress while a long prompt is read.

Only keel.agent.core.model.local.worker loads this module's engine: llama.cpp never runs in a process that must survive.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import threading
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from keel.agent.core.model.local.assemble import LocalModelUnavailable
from keel.agent.core.model.local.catalog import default_model
from keel.agent.core.model.local.llama_loading import build_llama
from keel.agent.core.model.local.spec import DEFAULT_CONTEXT_TOKENS
from keel.agent.core.model.local.state_cache import lean_state_cache
from keel.agent.core.model.local.token_trace import TokenTrace

DEFAULT_MAX_REPLY_TOKENS = 1_024
STATE_CACHE_BYTES = 1 << 30
STOP_STRINGS = ["<|im_end|>", "<|endoftext|>"]
PREFILL_REPORT_MIN = 768  # prompts with fewer new tokens are read without progress reports
_END = object()
T = TypeVar("T")
PromptProgress = Callable[[int, int], None]


class PromptTooLong(Exception):
    """The rendered prompt does not fit the model's context window (keel compacts and retries)."""


def import_llama_cpp(install_hint: str | None = None) -> Any:
    """llama_cpp, or LocalModelUnavailable saying how to install it (with the extra of the model wanted)."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise LocalModelUnavailable(
            f"llama-cpp-python is not installed ({exc}); {install_hint or default_model().install_hint}"
        ) from None
    return llama_cpp


def thread_counts() -> tuple[int, int]:
    """Decode on half the cores (spinning threads collapse when cores are shared), prompts on all of them."""
    cores = os.cpu_count() or 2
    decode = int(os.environ.get("KEEL_LOCAL_THREADS", "0")) or max(1, cores // 2)
    return decode, max(decode, cores)


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-format messages as HF chat templates expect them: string content, arguments as objects."""
    shaped = []
    for message in messages:
        item = dict(message)
        content = item.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        item["content"] = content or ""
        if item.get("tool_calls"):
            item["tool_calls"] = [_call_with_object_arguments(call) for call in item["tool_calls"]]
        shaped.append(item)
    return shaped


def _call_with_object_arguments(call: dict[str, Any]) -> dict[str, Any]:
    function = dict(call.get("function") or {})
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            function["arguments"] = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            pass  # the template then shows the raw string, which is what the model wrote
    return {**call, "function": function}


@dataclass
class Generation:
    """Counts of one reply, filled in as it streams."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"


@lru_cache(maxsize=8)
def _grammar(schema: str) -> Any:
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_json_schema(schema, verbose=False)


@dataclass(frozen=True)
class Sampling:
    """How one reply is sampled: `prose_only` keeps it from opening with a tool call; `call_schema` (JSON schema
    text) makes it exactly one JSON object of that schema, decoded under llama.cpp's grammar."""

    max_tokens: int | None = None
    temperature: float = float(os.environ.get("KEEL_LOCAL_TEMPERATURE", "0"))
    repeat_penalty: float = 1.05
    seed: int | None = (
        int(os.environ["KEEL_LOCAL_SEED"]) if os.environ.get("KEEL_LOCAL_SEED") else None
    )
    prose_only: bool = False
    call_schema: str | None = None


class _Worker:
    """One daemon thread for all of a model's llama calls, one at a time (a llama context is not thread-safe,
    and a new thread per reply would also set up a new OpenMP thread team each time)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def run(self, job: Callable[[], T]) -> asyncio.Future[T]:
        """Queue job; await the result."""
        future: Future[T] = Future()
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="keel-local-model", daemon=True
                )
                self._thread.start()
        self._jobs.put((job, future))
        return asyncio.wrap_future(future)

    def _serve(self) -> None:
        while True:
            job, future = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as exc:  # noqa: BLE001 - raised again where the job is awaited
                future.set_exception(exc)


@dataclass
class LocalEngine:
    """One loaded model; its replies are generated one at a time on its own thread."""

    path: Path
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    _llama: Any = None
    _formatter: Any = None
    _openers: set[int] | None = None
    _worker: _Worker = field(default_factory=_Worker)
    extra_buffers: bool = True  # as loaded: see llama_loading.extra_buffers_wanted

    @property
    def llama(self) -> Any:
        """The loaded llama_cpp.Llama (loading it first)."""
        self.load()
        return self._llama

    def load(self) -> None:
        if self._llama is not None:
            return
        llama_cpp = import_llama_cpp()
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        decode_threads, batch_threads = thread_counts()
        llama, self.extra_buffers = build_llama(
            llama_cpp,
            model_path=str(self.path),
            n_ctx=self.context_tokens,
            n_threads=decode_threads,
            n_threads_batch=batch_threads,
            verbose=False,
        )
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise LocalModelUnavailable(
                f"{self.path} has no chat template (tokenizer.chat_template); give an instruct model's GGUF"
            )
        eos, bos = llama.token_eos(), llama.token_bos()
        self._formatter = (
            Jinja2ChatFormatter(  # the file's own template, as llama.cpp's server uses it
                template=template,
                eos_token=llama._model.token_get_text(eos),
                bos_token=llama._model.token_get_text(bos) if bos >= 0 else "",
                stop_token_ids=[eos],
            )
        )
        self._llama = llama

    async def ready(self) -> None:
        """Load the model on the engine's thread."""
        await self._worker.run(self.load)

    def prompt_tokens(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        continuation: str = "",
    ) -> list[int]:
        """The conversation rendered by the model's own template (tools included), plus the start of the
        reply when one is given, tokenized."""
        self.load()
        rendered = self._formatter(messages=template_messages(messages), tools=tools or None)
        text = rendered.prompt + continuation
        return list(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _keep_states_if_switching(self, tokens: list[int]) -> None:
        """Several conversations take turns on this model (`keel batch`): from the first switch on, keep each
        one's evaluated state in RAM, so a turn costs a state reload (about a second) instead of evaluating the
        whole conversation again. A single conversation never pays for saving states."""
        llama = self._llama
        if llama.cache is not None or llama.n_tokens == 0:
            return
        shared = llama.longest_token_prefix(llama.input_ids[: llama.n_tokens].tolist(), tokens)
        if shared < min(len(tokens), llama.n_tokens) // 2:
            llama.set_cache(lean_state_cache(import_llama_cpp(), STATE_CACHE_BYTES))

    def _prefill(self, tokens: list[int], report: PromptProgress, stop: threading.Event) -> None:
        """Evaluate a long prompt's new tokens batch by batch, reporting each; create_completion then finds
        them evaluated and reads only the last one. Short prompts are left to create_completion."""
        llama = self._llama
        if (
            llama.cache is not None
        ):  # as create_completion would: start from the closest saved state
            try:
                saved = llama.cache[tokens]
            except KeyError:
                saved = None
            current = llama.longest_token_prefix(llama.input_ids[: llama.n_tokens].tolist(), tokens)
            if (
                saved is not None
                and llama.longest_token_prefix(saved.input_ids.tolist(), tokens) > current
            ):
                llama.load_state(saved)
        start = llama.longest_token_prefix(llama.input_ids[: llama.n_tokens].tolist(), tokens)
        end = len(tokens) - 1
        if end - start < PREFILL_REPORT_MIN:
            return
        llama.n_tokens = start
        report(0, end - start)
        for batch_start in range(start, end, llama.n_batch):
            if stop.is_set():
                return
            llama.eval(tokens[batch_start : min(end, batch_start + llama.n_batch)])
            report(llama.n_tokens - start, end - start)

    def _call_openers(self) -> set[int]:
        """Tokens a tool call starts with (`{`, `<tool_call>`, a fence) or blank ones; found once per model."""
        if self._openers is None:
            openers = set()
            for token in range(self._llama.n_vocab()):
                text = self._llama.detokenize([token], special=True).decode("utf-8", "ignore")
                if not text.strip() or text.lstrip().startswith(("{", "[{", "<tool", "```")):
                    openers.add(token)
            self._openers = openers
        return self._openers

    def _prose_start(self, prompt_length: int) -> Any:
        """A logits processor that makes the reply's first token prose, not the start of a tool call."""
        import numpy

        banned = numpy.fromiter(self._call_openers(), dtype=numpy.int64)

        def processor(input_ids: Any, scores: Any) -> Any:
            if len(input_ids) == prompt_length:
                scores[banned] = -numpy.inf
            return scores

        from llama_cpp import LogitsProcessorList

        return LogitsProcessorList([processor])

    async def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        counts: Generation,
        sampling: Sampling = Sampling(),
        continuation: str = "",
        on_prompt: PromptProgress | None = None,
        trace: TokenTrace | None = None,
    ) -> AsyncGenerator[str, None]:
        """Text pieces of the reply (after `continuation`, its given start) as the model produces them; the
        decoding runs on the engine's thread. `on_prompt(done, total)` hears how a long prompt's reading goes;
        `trace` gets the ids read and sampled, and the sampled ones' logprobs."""
        loop = asyncio.get_running_loop()
        tokens = await self._worker.run(lambda: self.prompt_tokens(messages, tools, continuation))
        room = self.context_tokens - len(tokens)
        if room < 16:
            raise PromptTooLong(
                f"the prompt has {len(tokens)} tokens; the embedded model's context window is {self.context_tokens}"
            )
        counts.prompt_tokens = len(tokens)
        limit = min(room, sampling.max_tokens or DEFAULT_MAX_REPLY_TOKENS)
        processors = (
            await self._worker.run(lambda: self._prose_start(len(tokens)))
            if sampling.prose_only
            else None
        )
        grammar = _grammar(sampling.call_schema) if sampling.call_schema else None
        if trace is not None:
            trace.prompt_ids = list(tokens)
            processors = trace.processors(processors)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stop = threading.Event()

        def deliver(item: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the event loop is gone: nobody is listening any more
                stop.set()

        def generate() -> None:
            try:
                self._keep_states_if_switching(tokens)
                if on_prompt is not None:
                    self._prefill(tokens, on_prompt, stop)
                if stop.is_set():
                    return
                with trace.watching(self._llama) if trace else nullcontext():
                    deliver_pieces()
            except Exception as exc:  # noqa: BLE001 - handed to the awaiting side, which raises it there
                deliver(exc)
            finally:
                deliver(_END)

        def deliver_pieces() -> None:
            pieces = self._llama.create_completion(
                tokens,
                max_tokens=limit,
                temperature=sampling.temperature,
                seed=sampling.seed,
                repeat_penalty=sampling.repeat_penalty,
                stop=STOP_STRINGS,
                stream=True,
                logits_processor=processors,
                grammar=grammar,
            )
            for piece in pieces:
                choice = piece["choices"][0]
                if choice.get("finish_reason"):
                    counts.finish_reason = choice["finish_reason"]
                if choice["text"]:
                    counts.completion_tokens += 1
                    deliver(choice["text"])
                if stop.is_set():
                    break

        self._worker.run(generate)
        try:
            while (item := await queue.get()) is not _END:
                if isinstance(item, Exception):
                    raise item
                yield item
        finally:
            stop.set()
