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

import uuid
from collections.abc import AsyncIterator, Iterator
from functools import cache
from typing import Any

from agent.local.compact_tools import compact_tool_schemas
from agent.local.engine import Generation, LocalEngine, PromptTooLong
from agent.local.reply_split import ReplySplitter

PROVIDER = "keel-local"


def _chunk(text: str = "", *, tool_use: dict[str, Any] | None = None, finish: str = "",
           usage: dict[str, int] | None = None) -> dict[str, Any]:
    """One litellm GenericStreamingChunk."""
    return {
        "text": text,
        "tool_use": tool_use,
        "is_finished": bool(finish),
        "finish_reason": finish,
        "usage": usage,
        "index": 0,
    }


def _tool_use(index: int, name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": f"call_{uuid.uuid4().hex[:12]}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
        "index": index,
    }


def _sampling(optional_params: dict[str, Any]) -> dict[str, Any]:
    temperature = optional_params.get("temperature")
    return {
        "max_tokens": optional_params.get("max_tokens") or optional_params.get("max_completion_tokens"),
        "temperature": 0.2 if temperature is None else float(temperature),
        "seed": optional_params.get("seed"),
    }


@cache
def _provider_class() -> type:
    """The CustomLLM subclass, built on first use so that importing keel never imports litellm."""
    from agent.model import litellm_module

    litellm = litellm_module()
    from litellm import CustomLLM

    class EmbeddedModelProvider(CustomLLM):
        """Serves one LocalEngine to litellm; streaming only is what keel uses, `acompletion` collects it."""

        def __init__(self, engine: LocalEngine) -> None:
            super().__init__()
            self.engine = engine

        async def astreaming(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                             model_response: Any, print_verbose: Any, encoding: Any, api_key: Any,
                             logging_obj: Any, optional_params: dict, *args: Any,
                             **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
            counts = Generation()
            splitter = ReplySplitter()
            tools = compact_tool_schemas(optional_params["tools"]) if optional_params.get("tools") else None
            try:
                async for piece in self.engine.stream(messages, tools, counts, **_sampling(optional_params)):
                    if shown := splitter.feed(piece):
                        yield _chunk(shown)
            except PromptTooLong as exc:
                raise litellm.ContextWindowExceededError(str(exc), model, PROVIDER) from None
            reply = splitter.finish()
            if reply.content:
                yield _chunk(reply.content)
            for index, call in enumerate(reply.calls):
                yield _chunk(tool_use=_tool_use(index, call.name, call.arguments))
            usage = {
                "prompt_tokens": counts.prompt_tokens,
                "completion_tokens": counts.completion_tokens,
                "total_tokens": counts.prompt_tokens + counts.completion_tokens,
            }
            finish = "tool_calls" if reply.calls else counts.finish_reason
            yield _chunk(finish=finish, usage=usage)

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
