"""The embedded model as a litellm provider, in process: `keel-local/<model>` streams through litellm like any model.

Why in process rather than a llama.cpp server on 127.0.0.1 (both measured by bench/local_model.py): decoding
runs at the same speed either way (llama.cpp's decode dominates; either path adds well under a millisecond per
token), but in process there is no server to spawn and wait for, no port, lock file, reference count or orphaned
server to manage, and — what decides it — llama-cpp-python's server hands back the model's tool calls as plain
text, while here the model's own chat template is rendered with the tools and the calls it writes are decoded
under a grammar of those tools and returned as real tool calls, so keel runs the native tool protocol.
The weights are memory-mapped, so agents in separate processes share one copy in the page cache.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from functools import cache
from typing import Any

from agent.local.compact_tools import compact_tool_schemas
from agent.local.engine import LocalEngine, PromptTooLong, Sampling
from agent.local.spec import PROVIDER
from agent.local.turn import LocalTurn
from agent.text_protocol import ParsedCall


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


def sampling_of(optional_params: dict[str, Any]) -> Sampling:
    """The request's sampling; greedy by default, so a run can be repeated (keel sends no temperature)."""
    sampling = Sampling(
        max_tokens=optional_params.get("max_tokens") or optional_params.get("max_completion_tokens"),
        seed=optional_params.get("seed"),
    )
    temperature = optional_params.get("temperature")
    return sampling if temperature is None else replace(sampling, temperature=float(temperature))


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
            turn = LocalTurn(self.engine, messages, tools, sampling_of(optional_params))
            try:
                async for text in turn.prose():
                    yield _chunk(text)
            except PromptTooLong as exc:
                raise litellm.ContextWindowExceededError(str(exc), model, PROVIDER) from None
            for index, call in enumerate(turn.calls):
                yield _chunk(tool_use=_tool_use(index, call))
            counts = turn.counts
            usage = {
                "prompt_tokens": counts.prompt_tokens,
                "completion_tokens": counts.completion_tokens,
                "total_tokens": counts.prompt_tokens + counts.completion_tokens,
            }
            yield _chunk(finish="tool_calls" if turn.calls else counts.finish_reason, usage=usage)

        def streaming(self, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
            raise litellm.APIConnectionError(
                "the embedded model streams asynchronously only (use litellm.acompletion)", PROVIDER, PROVIDER
            )

    return EmbeddedModelProvider


def register(engine: LocalEngine) -> None:
    """Make `keel-local/...` model names resolve to this engine in litellm (idempotent)."""
    from agent.model import litellm_module

    litellm = litellm_module()
    provider = _provider_class()(engine)
    others = [item for item in litellm.custom_provider_map if item.get("provider") != PROVIDER]
    litellm.custom_provider_map = [*others, {"provider": PROVIDER, "custom_handler": provider}]
    from litellm.utils import custom_llm_setup

    custom_llm_setup()
