"""A direct streaming client for OpenAI-compatible servers (`openai/<model>` with an api_base).

Local servers (llama.cpp, vLLM, Ollama, LM Studio) and gateways speak this one format; talking to
them directly (keel.agent.core.model.http1) skips litellm's and the openai SDK's per-call work, which costs tens of
milliseconds of CPU a call and is what limits many agents in one process. Every other provider,
and any server reached through a proxy, goes through litellm. Errors come out as keel's typed
provider errors, classified here.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from keel.agent.core.errors import (
    ContextWindowExceeded,
    ProviderError,
    RetryableProviderError,
    ToolsUnsupported,
)
from keel.agent.core.model.http1 import ConnectFailed, ConnectionLost, HTTP1Client
from keel.agent.core.model.prompt_chain import PromptChain
from keel.agent.core.model.reply import ModelReply, ReplyAssembler
from keel.agent.core.model.request_cache import LastRequestCache
from keel.agent.core.model.routing import session_body, session_headers
from keel.agent.core.model.sampling import CallSampling
from keel.agent.core.model.sse_reading import read_stream, read_whole, without_prompt_ids
from keel.agent.core.model.stall import events_keep_alive, unstalled
from keel.agent.core.model.turn_tokens import POLICY_VERSION_HEADER, TOKEN_REQUEST, TokenCollector
from keel.agent.core.protocol import TokenUsage

NO_KEY = "sk-keel-no-key"  # local OpenAI-compatible servers ignore the key but some want one sent
STATUS_CLASSES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    408: "Timeout",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    500: "InternalServerError",
    502: "BadGatewayError",
    503: "ServiceUnavailableError",
    504: "Timeout",
}
RETRYABLE_STATUSES = {408, 409, 429}
CONTEXT_TOO_LONG = re.compile(
    r"context length|context window|context size|context_length_exceeded|prompt is too long"
    r"|too many tokens|input is too long|reduce the length",
    re.IGNORECASE,
)


def is_direct_model(model: str, api_base: str | None) -> bool:
    """Whether a model goes over the direct client: an OpenAI-compatible server named by an
    http(s) URL and reached without a proxy (litellm handles proxies)."""
    if (
        not api_base
        or not model.startswith("openai/")
        or os.environ.get("KEEL_TRANSPORT") == "litellm"
    ):
        return False
    parts = urlsplit(api_base)
    return (
        parts.scheme in ("http", "https")
        and parts.hostname is not None
        and not _uses_proxy(parts.scheme, parts.hostname)
    )


def says_tools_unsupported(message: str) -> bool:
    """A 400 that rejects the `tools` parameter (the session then switches to the text protocol)."""
    lowered = message.lower()
    return "tool" in lowered and any(w in lowered for w in ("support", "not allowed", "unknown"))


def error_for_status(status: int, message: str, retry_after: float | None = None) -> ProviderError:
    """The typed error for an HTTP error response."""
    name = STATUS_CLASSES.get(status, "InternalServerError" if status >= 500 else "APIError")
    if status in (400, 413, 422) and CONTEXT_TOO_LONG.search(message):
        return ContextWindowExceeded(message, "ContextWindowExceededError")
    if status in (400, 422) and says_tools_unsupported(message):
        return ToolsUnsupported(message, name)
    if status in RETRYABLE_STATUSES or status >= 500:
        return RetryableProviderError(message, name, retry_after=retry_after)
    if status == 401:
        message += " (check the API key the server expects in OPENAI_API_KEY)"
    elif status == 404:
        message += " (check the model name, and that api_base is the server's /v1 URL)"
    return ProviderError(message, name)


def _error_message(status: int, body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        return text[:500] or f"HTTP {status}"
    error = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
    if isinstance(error, dict):
        found = error.get("message") or error.get("detail") or error.get("error")
        return str(found)[:2000] if found else text[:500]
    return str(error)[:2000]


def _retry_after(headers: dict[str, str]) -> float | None:
    try:
        return float(headers.get("retry-after", ""))
    except ValueError:
        return None


def _uses_proxy(scheme: str, host: str) -> bool:
    """Whether the environment sends requests to this host through a proxy (HTTP(S)_PROXY, NO_PROXY).
    Without `<scheme>_proxy` or `<SCHEME>_PROXY` set, no: that is checked without scanning the whole
    environment, as getproxies does, for each session a process starts."""
    if not (os.environ.get(f"{scheme}_proxy") or os.environ.get(f"{scheme.upper()}_PROXY")):
        return False
    return scheme in getproxies() and not proxy_bypass(host)


class _BodyEncoder:
    """JSON request bodies built from per-message fragments: a message's JSON is encoded once.

    The fragments are kept for the last request's messages (keel.agent.core.model.request_cache).
    """

    def __init__(self) -> None:
        self._fragments = LastRequestCache(
            lambda message: json.dumps(message, separators=(",", ":")).encode()
        )
        self._tools: tuple[object, bytes] = (None, b"")

    def encode(
        self,
        head: dict[str, Any],
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
    ) -> bytes:
        pieces = [json.dumps(head, separators=(",", ":")).encode()[:-1], b',"messages":[']
        pieces += [b",".join(self._fragments.map(messages)), b"]"]
        if tools:
            if self._tools[0] is not tools:
                self._tools = (tools, json.dumps(tools, separators=(",", ":")).encode())
            pieces += [b',"tools":', self._tools[1]]
        return b"".join([*pieces, b"}"])  # one copy of a body that holds the whole history


class OpenAIHTTP:
    """Streams chat completions from one OpenAI-compatible server over one keep-alive connection."""

    def __init__(
        self,
        model: str,
        api_base: str,
        timeout: float,
        extra: dict[str, Any],
        record_tokens: bool = False,
        stall_timeout: float = 120.0,
        session_id: str = "",
        prompts: PromptChain | None = None,
    ) -> None:
        """`session_id` goes with every call (keel.agent.core.model.routing); `extra` is sent as given;
        `prompts`, the session's, reads each prompt's ids against the last logged call's."""
        self.prompts = prompts
        self.model = model.removeprefix("openai/")
        self.stall_timeout = stall_timeout
        self.api_base = api_base
        self.timeout = timeout
        self.extra = extra
        self.asked = {**TOKEN_REQUEST, **session_body(session_id, True)} if record_tokens else {}
        self.record_tokens = record_tokens
        key = os.environ.get("OPENAI_API_KEY") or NO_KEY
        self.headers = {
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "User-Agent": "keel",
            **session_headers(session_id),
        }
        self._http = HTTP1Client(api_base, connect_timeout=min(timeout, 30.0))
        self._encoder = _BodyEncoder()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int | None,
        on_delta: Callable[[str], None],
        price: Callable[[TokenUsage], float | None],
        sampling: CallSampling | None = None,
    ) -> ModelReply:
        head: dict[str, Any] = {
            "model": self.model,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        head.update(self.extra)
        head.update(self.asked)
        if sampling is not None:  # the call's own, over the profile's
            head.update(sampling.fields())
        if max_tokens:  # the call's own limit (a summary's) over the profile's
            head["max_tokens"] = max_tokens
        body = self._encoder.encode(head, messages, tools)
        assembler = ReplyAssembler(
            tokens=TokenCollector(chain=self.prompts) if self.record_tokens else None
        )
        try:
            async with (
                asyncio.timeout(self.timeout) as deadline,
                self._http.post("/chat/completions", body, self.headers) as response,
            ):
                events = events_keep_alive(response.body(), deadline, self.timeout)
                pieces = unstalled(events, self.stall_timeout, self.api_base)
                if response.status >= 400:
                    message = _error_message(response.status, await _joined(pieces))
                    raise error_for_status(response.status, message, _retry_after(response.headers))
                if assembler.tokens is not None:
                    version = response.headers.get(POLICY_VERSION_HEADER.lower())
                    assembler.tokens.policy_version = version
                if response.headers.get("content-type", "").startswith("application/json"):
                    whole = without_prompt_ids(assembler, await _joined(pieces))
                    read_whole(assembler, json.loads(whole), on_delta)
                else:
                    await read_stream(assembler, pieces, on_delta)
        except ConnectFailed as exc:
            raise RetryableProviderError(
                f"Connection error: could not connect to {self.api_base} ({exc})",
                "APIConnectionError",
            ) from exc
        except ConnectionLost as exc:
            raise RetryableProviderError(
                f"Connection error: {self.api_base}: {exc}", "APIConnectionError"
            ) from exc
        except TimeoutError as exc:
            raise RetryableProviderError(
                f"nothing from {self.api_base} for {self.timeout:g} s (request_timeout)", "Timeout"
            ) from exc
        except ssl.SSLCertVerificationError as exc:
            raise ProviderError(
                f"TLS certificate of {self.api_base} not accepted: {exc}", "APIConnectionError"
            ) from exc
        except ssl.SSLError as exc:
            raise RetryableProviderError(
                f"Connection error: TLS failure with {self.api_base}: {exc}", "APIConnectionError"
            ) from exc
        except ValueError as exc:  # a whole (non-streamed) body that is not JSON
            raise RetryableProviderError(
                f"{self.api_base} sent a reply that is not JSON", "APIError"
            ) from exc
        return assembler.reply(messages, tools, price)


async def _joined(body: AsyncIterator[bytes]) -> bytes:
    return b"".join([piece async for piece in body])
