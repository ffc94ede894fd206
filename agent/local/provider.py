"""The embedded model as a litellm provider, in process: `keel-local/<model>` streams through litellm like any model.

Why in process rather than a llama.cpp server on 127.0.0.1 (both were measured by bench/local_model.py):
decoding speed is the same either way (llama.cpp's decode dominates; the per-token overhead of either path is
well under a millisecond), but the in-process path starts faster (no server process to spawn and poll), has no
port, lock file, reference count or orphaned server to manage, and — what decides it — llama-cpp-python's server
returns the model's tool calls as plain text, while this provider renders the model's own chat template with the
tools and turns the JSON the model writes into real tool calls, so the loop runs the native tool protocol.
The weights are memory-mapped, so parallel agents in separate processes share one copy in the page cache.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from functools import cache
from typing import Any

from agent.local.compact_tools import compact_tool_schemas
from agent.local.engine import Generation, LocalEngine, PromptTooLong, Sampling
from agent.local.reply_split import ReplySplitter, SplitReply
from agent.text_protocol import ParsedCall
from prompts import render

PROVIDER = "keel-local"


def _chunk(text: str = "", *, tool_use: dict[str, Any] | None = None, finish: str = "",
           usage: dict[str, int] | None = None) -> dict[str, Any]:
    """One litellm GenericStreamingChunk."""
    return {"text": text, "tool_use": tool_use, "is_finished": bool(finish), "finish_reason": finish,
            "usage": usage, "index": 0}


def _tool_use(index: int, call: ParsedCall) -> dict[str, Any]:
    return {
        "id": f"call_{uuid.uuid4().hex[:12]}",
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
        "index": index,
    }


def _sampling(optional_params: dict[str, Any]) -> Sampling:
    temperature = optional_params.get("temperature")
    return Sampling(
        max_tokens=optional_params.get("max_tokens") or optional_params.get("max_completion_tokens"),
        temperature=0.2 if temperature is None else float(temperature),
        seed=optional_params.get("seed"),
    )


def _arguments(raw: Any) -> Any:
    try:
        return json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return raw


def repeats_last_call(messages: list[dict[str, Any]], call: ParsedCall) -> bool:
    """True when call is the same as the model's previous call, whose result it already has."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            previous = [c.get("function") or {} for c in message.get("tool_calls") or []]
            return any(
                p.get("name") == call.name and _arguments(p.get("arguments")) == _arguments(call.arguments)
                for p in previous
            )
    return False


@cache
def _provider_class() -> type:
    """The CustomLLM subclass, built on first use so that importing keel never imports litellm."""
    from agent.model import litellm_module

    litellm = litellm_module()
    from litellm import CustomLLM

    class EmbeddedModelProvider(CustomLLM):
        """Serves one LocalEngine to litellm; keel streams, so `astreaming` is the one entry point."""

        def __init__(self, engine: LocalEngine) -> None:
            super().__init__()
            self.engine = engine

        async def astreaming(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                             model_response: Any, print_verbose: Any, encoding: Any, api_key: Any,
                             logging_obj: Any, optional_params: dict, *args: Any,
                             **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
            tools = compact_tool_schemas(optional_params["tools"]) if optional_params.get("tools") else None
            sampling = _sampling(optional_params)
            counts = Generation()
            reply = SplitReply(content="", calls=[])
            try:
                async for text in self._reply(messages, tools, sampling, counts, reply, parse=bool(tools)):
                    yield _chunk(text)
                if reply.calls and repeats_last_call(messages, reply.calls[0]):
                    # A small model asks again for what it has instead of answering: ask it for the answer.
                    reply.calls = []
                    nudge = {"role": "user", "content": render("local_answer", name=reply_name(messages))}
                    prose = Sampling(sampling.max_tokens, sampling.temperature, sampling.seed, prose_only=True)
                    async for text in self._reply([*messages, nudge], tools, prose, counts, reply, parse=False):
                        yield _chunk(text)
            except PromptTooLong as exc:
                raise litellm.ContextWindowExceededError(str(exc), model, PROVIDER) from None
            for index, call in enumerate(reply.calls):
                yield _chunk(tool_use=_tool_use(index, call))
            usage = {
                "prompt_tokens": counts.prompt_tokens,
                "completion_tokens": counts.completion_tokens,
                "total_tokens": counts.prompt_tokens + counts.completion_tokens,
            }
            yield _chunk(finish="tool_calls" if reply.calls else counts.finish_reason, usage=usage)

        async def _reply(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                         sampling: Sampling, counts: Generation, reply: SplitReply,
                         parse: bool) -> AsyncIterator[str]:
            """Stream the prose of one generation; with `parse`, the tool calls it wrote land in `reply.calls`."""
            splitter = ReplySplitter()
            async with aclosing(self.engine.stream(messages, tools, counts, sampling)) as pieces:
                async for piece in pieces:
                    if not parse:
                        yield piece  # keel's text protocol (no tools offered) parses calls itself
                        continue
                    if shown := splitter.feed(piece):
                        yield shown
                    if splitter.holds_complete_call():
                        break  # one call per reply; whatever follows it would be discarded
            if parse:
                rest = splitter.finish()
                if rest.content:
                    yield rest.content
                reply.calls = rest.calls

        def streaming(self, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
            raise litellm.APIConnectionError(
                "the embedded model streams asynchronously only (use litellm.acompletion)", PROVIDER, PROVIDER
            )

    return EmbeddedModelProvider


def reply_name(messages: list[dict[str, Any]]) -> str:
    """The tool the model's previous call used, for the nudge."""
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            return str((call.get("function") or {}).get("name") or "tool")
    return "tool"


def register(engine: LocalEngine) -> None:
    """Make `keel-local/...` model names resolve to this engine in litellm (idempotent)."""
    from agent.model import litellm_module

    litellm = litellm_module()
    provider = _provider_class()(engine)
    others = [item for item in litellm.custom_provider_map if item.get("provider") != PROVIDER]
    litellm.custom_provider_map = [*others, {"provider": PROVIDER, "custom_handler": provider}]
    from litellm.utils import custom_llm_setup

    custom_llm_setup()
