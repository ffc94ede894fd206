"""The model layer: one streaming chat call (direct or through litellm), with bounded retries and typed errors."""

from __future__ import annotations

import asyncio
import os
import random
import re
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, Protocol

from keel.agent.core.diagnostics import inject_fault
from keel.agent.core.errors import (
    ContextWindowExceeded,
    ProviderError,
    RetryableProviderError,
    ToolsUnsupported,
)
from keel.agent.core.model.local.names import is_embedded
from keel.agent.core.model.openai_http import (
    NO_KEY,
    OpenAIHTTP,
    is_direct_model,
    says_tools_unsupported,
)
from keel.agent.core.model.prices import context_window, cost_of
from keel.agent.core.model.prompt_chain import PromptChain
from keel.agent.core.model.reply import ModelReply, ReplyAssembler, usage_from
from keel.agent.core.model.routing import session_body, session_headers
from keel.agent.core.model.sampling import CallSampling
from keel.agent.core.model.stall import unstalled
from keel.agent.core.model.tokens import use_bundled_tiktoken_files
from keel.agent.core.model.turn_tokens import THROUGH_LITELLM, TokenCollector
from keel.agent.core.protocol import ModelProgress, ModelRetry, TokenUsage
from keel.prompts import plural

if TYPE_CHECKING:
    from keel.agent.core.model.local.client import EmbeddedClient

MAX_RETRY_AFTER = 60.0  # seconds: a longer Retry-After is not waited out in full
# Packages whose exceptions are the provider's or the transport's, never keel's own bugs.
PROVIDER_PACKAGES = frozenset({"litellm", "openai", "anthropic", "httpx", "httpcore", "aiohttp"})
TRANSPORT_ERRORS = (TimeoutError, ConnectionError, ssl.SSLError, socket.gaierror)

__all__ = [
    "ChatModel",
    "ModelClient",
    "ModelReply",
    "classify",
    "context_window_of",
    "litellm_module",
]


@cache
def litellm_module() -> Any:
    """Import litellm on first use only (it costs seconds), offline-safe."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    use_bundled_tiktoken_files()
    import litellm

    litellm.drop_params = True
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


class ChatModel(Protocol):
    """What the loop needs of a model: one streamed reply. ModelClient is the litellm one. `tools` None
    sends none (the text protocol describes them in the prompt); [] asks for an answer with no call;
    `sampling` sets this call's temperature or seed over the model's own."""

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: Callable[[str], None],
        max_tokens: int | None = None,
        sampling: CallSampling | None = None,
    ) -> ModelReply: ...


# no key for the provider: litellm says so as a 500 (openai) or a connection error (gemini), never retryable
_MISSING_KEY = re.compile(r"missing credentials|missing \w+ api key", re.IGNORECASE)
_LITELLM_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*)?(?:\w+Error:\s*)?(?:\w+Exception\s*-\s*)?")


def _clean(text: str) -> str:
    """The provider's message without litellm's repeated class-name prefixes."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return _LITELLM_PREFIX.sub("", first).strip()


def from_provider(exc: BaseException) -> bool:
    """Whether the provider stack raised it: litellm's and the SDKs' errors, HTTP failures, timeouts, a
    dropped connection. Anything else raised while calling a model is a bug of keel's."""
    if isinstance(exc, (ProviderError, *TRANSPORT_ERRORS)):
        return True
    return any(cls.__module__.partition(".")[0] in PROVIDER_PACKAGES for cls in type(exc).__mro__)


def classify(exc: BaseException) -> ProviderError | None:
    """Map what the provider stack raised onto keel's typed provider errors; None when it is not the
    provider's (the session then reports an internal error, with its traceback)."""
    if isinstance(exc, ProviderError):
        return exc
    if not from_provider(exc):
        return None
    litellm = litellm_module()
    name = type(exc).__name__
    message = _clean(str(exc)) or name
    if isinstance(exc, litellm.ContextWindowExceededError):
        return ContextWindowExceeded(message, name)
    if _MISSING_KEY.search(message):
        return ProviderError(
            f"{message} (or choose another model: keel models)", "AuthenticationError"
        )
    if (
        "connection error" in message.lower()
    ):  # litellm reports a refused or dropped connection as a 500
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
        if says_tools_unsupported(message):
            return ToolsUnsupported(message, name)
        return ProviderError(message, name)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and (status == 429 or status >= 500):
        return RetryableProviderError(message, name)
    if isinstance(exc, litellm.APIError) and status is None:
        return RetryableProviderError(message, name)  # a stream cut off mid-way surfaces like this
    return ProviderError(message, name)


@dataclass
class ModelClient:
    """Calls one model; `complete` streams a reply and retries faults a retry can fix.

    OpenAI-compatible servers named by an api_base go over the direct client (keel.agent.core.model.openai_http), the
    embedded model to its worker process (keel.agent.core.model.local.client); every other model through litellm.
    KEEL_TRANSPORT=litellm sends every server through litellm.
    """

    model: str
    api_base: str | None = None
    retries: int = 4
    retry_base_delay: float = 0.5
    timeout: float = 600.0
    stall_timeout: float = 120.0  # a reply stream with no bytes for this long is a retryable fault
    on_retry: Callable[[ModelRetry], None] = lambda event: None
    on_progress: Callable[[ModelProgress], None] = lambda event: None
    extra: dict[str, Any] = field(default_factory=dict)
    context_window: int | None = None  # the embedded model's, which sizes its worker
    record_tokens: bool = (
        False  # ask for each call's token ids and logprobs (keel.agent.core.model.turn_tokens)
    )
    session_id: str = ""  # sent with every call, for a router (keel.agent.core.model.routing)
    prompts: PromptChain | None = (
        None  # the session's last logged call (keel.agent.core.model.prompt_chain)
    )
    _direct: OpenAIHTTP | EmbeddedClient | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if is_embedded(self.model):
            from keel.agent.core.model.local.client import EmbeddedClient

            self._direct = EmbeddedClient(
                self.model, self.context_window, self.extra, self.on_progress, self.record_tokens
            )
        elif self.api_base and is_direct_model(self.model, self.api_base):
            self._direct = OpenAIHTTP(
                self.model,
                self.api_base,
                self.timeout,
                self.extra,
                self.record_tokens,
                self.stall_timeout,
                self.session_id,
                self.prompts,
            )

    async def aclose(self) -> None:
        """Close the direct client's connections (litellm keeps its own)."""
        if self._direct is not None:
            await self._direct.aclose()

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: Callable[[str], None],
        max_tokens: int | None = None,
        sampling: CallSampling | None = None,
    ) -> ModelReply:
        """One reply, retried with exponential backoff and jitter on retryable faults."""
        attempt = 0
        while True:
            try:
                if self._direct is not None:
                    reply = await self._direct.stream(
                        messages, tools, max_tokens, on_delta, self._cost, sampling
                    )
                else:
                    reply = await self._litellm_once(
                        messages, tools, on_delta, max_tokens, sampling
                    )
                inject_fault("model.reply")  # tests only: a bug of keel's while handling a reply
                return reply
            except asyncio.CancelledError:
                raise
            except (
                Exception
            ) as exc:  # provider failures are classified here; keel's own errors go on up
                error = classify(exc)
                if error is None:
                    raise
                if not isinstance(error, RetryableProviderError):
                    raise error from exc
                if attempt >= self.retries:
                    where = f" at {self.api_base}" if self.api_base else ""
                    raise ProviderError(
                        f"{error} (gave up after {plural(attempt, 'retry', 'retries')}; is the model server{where} reachable?)",
                        error.error_class,
                    ) from exc
                attempt += 1
                delay = self.retry_base_delay * (2 ** (attempt - 1)) * random.uniform(0.8, 1.2)
                delay = max(delay, min(error.retry_after or 0.0, MAX_RETRY_AFTER))
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

    def _litellm_kwargs(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int | None,
        sampling: CallSampling | None = None,
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [
                dict(m) for m in messages
            ],  # the request's dicts are cached: litellm gets copies
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.timeout,
            "num_retries": 0,
            "max_retries": 0,
            **self.extra,
            **(sampling.fields() if sampling else {}),
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
            if self.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
                kwargs["api_key"] = NO_KEY
        if tools:
            kwargs["tools"] = tools
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if self.session_id:
            headers = {**kwargs.get("extra_headers", {}), **session_headers(self.session_id)}
            kwargs["extra_headers"] = headers
        if self.record_tokens:
            kwargs["logprobs"] = True
            if self.model.partition("/")[0] in ("openai", "hosted_vllm"):  # vLLM's own parameter
                kwargs["extra_body"] = {
                    **kwargs.get("extra_body", {}),
                    "return_token_ids": True,
                    **session_body(self.session_id, self.record_tokens),
                }
        return kwargs

    async def _litellm_once(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: Callable[[str], None],
        max_tokens: int | None,
        sampling: CallSampling | None,
    ) -> ModelReply:
        litellm = litellm_module()
        kwargs = self._litellm_kwargs(messages, tools, max_tokens, sampling)
        stream = await litellm.acompletion(**kwargs)
        assembler = ReplyAssembler(
            tokens=TokenCollector(relay=THROUGH_LITELLM) if self.record_tokens else None
        )
        where = self.api_base or self.model
        async for chunk in unstalled(stream, self.stall_timeout, where):
            if assembler.tokens is not None:
                assembler.tokens.add_chunk(chunk.model_dump())
            raw = getattr(chunk, "usage", None)
            if raw is not None:
                details = getattr(raw, "prompt_tokens_details", None)
                assembler.usage = usage_from(
                    getattr(raw, "prompt_tokens", 0),
                    getattr(raw, "completion_tokens", 0),
                    getattr(raw, "total_tokens", 0),
                    getattr(details, "cached_tokens", 0) if details else 0,
                )
            for choice in chunk.choices or []:
                assembler.finish_reason = choice.finish_reason or assembler.finish_reason
                delta = choice.delta
                if delta is None:
                    continue
                if delta.content:
                    on_delta(assembler.add_text(delta.content))
                for piece in delta.tool_calls or []:
                    function = piece.function
                    assembler.add_tool_piece(
                        piece.index or 0,
                        piece.id,
                        function.name if function else None,
                        function.arguments if function else None,
                    )
        return assembler.reply(messages, tools, self._cost)

    def _cost(self, usage: TokenUsage) -> float | None:
        if self._direct is not None:
            return cost_of(self.model, usage)  # from the price map, without importing litellm
        try:
            prompt_cost, completion_cost = litellm_module().cost_per_token(
                model=self.model,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )
        except Exception:  # noqa: BLE001 - litellm raises a bare Exception for a model it has no price for
            return None
        return float(prompt_cost + completion_cost)


def context_window_of(
    model: str, configured: int | None, default: int, api_base: str | None = None
) -> int:
    """The context window: configured, else what the price map (or litellm) knows of the model, else the default."""
    if configured:
        return configured
    known = context_window(model)
    if known or is_direct_model(model, api_base):
        return known or default
    try:
        info = litellm_module().get_model_info(model)
    except Exception:  # noqa: BLE001 - litellm raises a bare Exception for an unknown model; the default applies
        return default
    return int(info.get("max_input_tokens") or info.get("max_tokens") or default)


ToolProtocolName = Literal["native", "text"]
