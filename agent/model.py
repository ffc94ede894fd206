"""The model layer: one streaming chat call through litellm, with bounded retries and typed errors."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from agent.errors import (
    ContextWindowExceeded,
    ProviderError,
    RetryableProviderError,
    ToolsUnsupported,
)
from agent.protocol import ModelRetry, TokenUsage, ToolCall


@cache
def litellm_module() -> Any:
    """Import litellm on first use only (it costs seconds), offline-safe."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    spec = importlib.util.find_spec("litellm")
    if spec and spec.submodule_search_locations:
        tokenizers = (
            Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
        )
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(tokenizers))
    import litellm

    litellm.drop_params = True
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


class ModelReply(BaseModel):
    """What one model call produced."""

    text: str
    tool_calls: list[ToolCall]
    usage: TokenUsage
    cost: float | None = None
    finish_reason: str | None = None


class ChatModel(Protocol):
    """What the loop needs of a model: one streamed reply. ModelClient is the litellm one."""

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: Callable[[str], None],
        max_tokens: int | None = None,
    ) -> ModelReply: ...


@dataclass
class _ToolCallBuffer:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


_LITELLM_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*)?(?:\w+Error:\s*)?(?:\w+Exception\s*-\s*)?")


def _clean(text: str) -> str:
    """The provider's message without litellm's repeated class-name prefixes."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return _LITELLM_PREFIX.sub("", first).strip()


def classify(exc: BaseException) -> ProviderError:
    """Map whatever the provider stack raised onto keel's typed provider errors."""
    litellm = litellm_module()
    name = type(exc).__name__
    message = _clean(str(exc)) or name
    if isinstance(exc, litellm.ContextWindowExceededError):
        return ContextWindowExceeded(message, name)
    if "connection error" in message.lower():  # litellm reports a refused or dropped connection as a 500
        return RetryableProviderError(message, "APIConnectionError")
    if isinstance(
        exc,
        (
            litellm.RateLimitError,
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
            litellm.APIConnectionError,
            litellm.Timeout,
            litellm.BadGatewayError,
            asyncio.TimeoutError,
            ConnectionError,
        ),
    ):
        return RetryableProviderError(message, name)
    if isinstance(exc, litellm.BadRequestError):
        lowered = message.lower()
        if "tool" in lowered and any(w in lowered for w in ("support", "not allowed", "unknown")):
            return ToolsUnsupported(message, name)
        return ProviderError(message, name)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and (status == 429 or status >= 500):
        return RetryableProviderError(message, name)
    if isinstance(exc, litellm.APIError) and status is None:
        return RetryableProviderError(message, name)  # a stream cut off mid-way surfaces like this
    return ProviderError(message, name)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """Text a provider streamed, with lone UTF-16 surrogates (not encodable, so unloggable) as U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def _usage_of(raw: Any) -> TokenUsage | None:
    if raw is None:
        return None
    prompt = int(getattr(raw, "prompt_tokens", 0) or 0)
    completion = int(getattr(raw, "completion_tokens", 0) or 0)
    details = getattr(raw, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details else 0
    return TokenUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=int(getattr(raw, "total_tokens", 0) or prompt + completion),
        cached_tokens=cached,
    )


def estimate_tokens(text: str) -> int:
    """A cheap estimate for when the provider reports no usage."""
    return max(1, len(text) // 4)


@dataclass
class ModelClient:
    """Calls one model; `complete` streams a reply and retries faults a retry can fix."""

    model: str
    api_base: str | None = None
    retries: int = 4
    retry_base_delay: float = 0.5
    timeout: float = 600.0
    on_retry: Callable[[ModelRetry], None] = lambda event: None
    extra: dict[str, Any] = field(default_factory=dict)

    def _kwargs(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.timeout,
            "num_retries": 0,
            "max_retries": 0,
            **self.extra,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
            if self.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
                kwargs["api_key"] = "sk-keel-no-key"  # local OpenAI-compatible servers ignore it
        if tools:
            kwargs["tools"] = tools
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        return kwargs

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: Callable[[str], None],
        max_tokens: int | None = None,
    ) -> ModelReply:
        """One reply, retried with exponential backoff and jitter on retryable faults."""
        attempt = 0
        while True:
            try:
                return await self._stream_once(messages, tools, on_delta, max_tokens)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # every provider failure is classified here, in one place
                error = exc if isinstance(exc, ProviderError) else classify(exc)
                if not isinstance(error, RetryableProviderError):
                    raise error from exc
                if attempt >= self.retries:
                    where = f" at {self.api_base}" if self.api_base else ""
                    raise ProviderError(
                        f"{error} (gave up after {attempt} retries; is the model server{where} reachable?)",
                        error.error_class,
                    ) from exc
                attempt += 1
                delay = self.retry_base_delay * (2 ** (attempt - 1)) * random.uniform(0.8, 1.2)
                self.on_retry(
                    ModelRetry(
                        attempt=attempt,
                        max_attempts=self.retries,
                        error_class=error.error_class,
                        message=str(error),
                        delay=round(delay, 3),
                    )
                )
                await asyncio.sleep(delay)

    async def _stream_once(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: Callable[[str], None],
        max_tokens: int | None,
    ) -> ModelReply:
        litellm = litellm_module()
        stream = await litellm.acompletion(**self._kwargs(messages, tools, max_tokens))
        text: list[str] = []
        calls: dict[int, _ToolCallBuffer] = {}
        usage: TokenUsage | None = None
        finish: str | None = None
        async for chunk in stream:
            usage = _usage_of(getattr(chunk, "usage", None)) or usage
            for choice in chunk.choices or []:
                finish = choice.finish_reason or finish
                delta = choice.delta
                if delta is None:
                    continue
                if delta.content:
                    piece_text = valid_text(delta.content)
                    text.append(piece_text)
                    on_delta(piece_text)
                for piece in delta.tool_calls or []:
                    buffer = calls.setdefault(piece.index or 0, _ToolCallBuffer())
                    buffer.id = piece.id or buffer.id
                    if piece.function is not None:
                        buffer.name = valid_text(piece.function.name or "") or buffer.name
                        if piece.function.arguments:
                            buffer.arguments.append(valid_text(piece.function.arguments))
        reply_text = "".join(text)
        tool_calls = [
            ToolCall(id=b.id or f"call_{i}", name=b.name, arguments="".join(b.arguments))
            for i, b in sorted(calls.items())
        ]
        if usage is None or usage.total_tokens == 0:
            prompt = sum(estimate_tokens(str(m.get("content") or "")) for m in messages)
            completion = estimate_tokens(reply_text + "".join(c.arguments for c in tool_calls))
            usage = TokenUsage(
                prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
            )
        return ModelReply(
            text=reply_text,
            tool_calls=tool_calls,
            usage=usage,
            cost=self._cost(usage),
            finish_reason=finish,
        )

    def _cost(self, usage: TokenUsage) -> float | None:
        try:
            prompt_cost, completion_cost = litellm_module().cost_per_token(
                model=self.model,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )
        except Exception:  # litellm raises for models it has no price for
            return None
        return prompt_cost + completion_cost


def context_window_of(model: str, configured: int | None, default: int) -> int:
    """The context window: configured, else what litellm knows of the model, else the default."""
    if configured:
        return configured
    try:
        info = litellm_module().get_model_info(model)
    except Exception:  # unknown models raise; the default applies
        return default
    return int(info.get("max_input_tokens") or info.get("max_tokens") or default)


ToolProtocolName = Literal["native", "text"]
