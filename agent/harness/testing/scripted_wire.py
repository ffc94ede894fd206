"""The scripted server's data (replies, requests) and OpenAI wire formats: bodies, SSE chunks, errors."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from keel.agent.harness.testing.scripted_tokens import ReplyTokens

CREATED = 1_700_000_000  # a fixed timestamp keeps every response byte-for-byte reproducible


class ScriptedToolCall(BaseModel):
    """One tool call in a reply; dict arguments are JSON-encoded, a string is sent verbatim."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


class UsageOverride(BaseModel):
    """Usage figures a reply reports instead of the server's estimates (unset ones stay estimated)."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cached_tokens: int | None = None


class Reply(BaseModel):
    """One scripted answer: text and/or tool calls, or an HTTP error, a dropped connection, delays."""

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    finish_reason: str | None = None  # default: "tool_calls" when there are calls, else "stop"
    error: int | None = None  # HTTP status instead; 400 without error_message: context too long
    error_message: str | None = None
    retry_after: float | None = None  # sent as a Retry-After header with an error
    drop: bool = False  # close the connection without any response
    drop_after_chunks: int | None = None  # stream this many SSE events, then close abruptly
    stall_after_chunks: int | None = None  # stream this many SSE events, then send nothing more
    delay: float = 0.0  # seconds before responding
    chunk_delay: float = 0.0  # seconds between SSE events
    usage: UsageOverride | None = None
    tokens: ReplyTokens | None = (
        None  # sent in vLLM's shape when the request asks (scripted_tokens)
    )
    headers: dict[str, str] = Field(
        default_factory=dict
    )  # sent with the reply (X-Policy-Version, say)

    def effective_finish_reason(self) -> str:
        if self.finish_reason:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


class ChatRequest(BaseModel):
    """A chat completions request as a responder sees it (unknown OpenAI fields are kept)."""

    model_config = ConfigDict(extra="allow")

    model: str = ""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    step: int = Field(default=0, exclude=True)  # scripted replies served before this request
    prompt_tokens: int = Field(default=0, exclude=True)

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.get("include_usage"))

    @property
    def last_message(self) -> dict[str, Any]:
        return self.messages[-1] if self.messages else {}

    def last_text(self, role: str | None = None) -> str:
        """The text of the last message (of `role`, if given); "" when there is none."""
        for message in reversed(self.messages):
            if role is None or message.get("role") == role:
                return content_text(message.get("content"))
        return ""


@dataclass
class RecordedRequest:
    """What the server received and what it did about it."""

    path: str
    body: dict[str, Any]
    prompt_tokens: int
    answered: bool = False  # a scripted reply was consumed and served (even an error or a drop)
    fault: str | None = None  # "429", "500", "503", "drop", "context_length_exceeded", ...
    reply: Reply | None = None
    headers: dict[str, str] = field(default_factory=dict)  # the request's, names lower-cased

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages") or []

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.body.get("tools") or []

    @property
    def tool_names(self) -> list[str]:
        return [tool["function"]["name"] for tool in self.tools]

    def last_text(self, role: str | None = None) -> str:
        """The text of the last message (of `role`, if given); "" when there is none."""
        return ChatRequest(messages=self.messages).last_text(role)


def content_text(content: Any) -> str:
    """The text of a message's content, whether a string or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def estimate_prompt_tokens(body: dict[str, Any]) -> int:
    """A deterministic stand-in for a tokenizer: chars/4 over contents, call arguments and tools."""
    chars = 0
    for message in body.get("messages") or []:
        chars += len(content_text(message.get("content")))
        if message.get("tool_calls"):
            chars += len(json.dumps(message["tool_calls"], sort_keys=True))
    if body.get("tools"):
        chars += len(json.dumps(body["tools"], sort_keys=True))
    return math.ceil(chars / 4)


def estimate_completion_tokens(reply: Reply) -> int:
    chars = len(reply.text) + sum(len(c.name) + len(c.arguments_text()) for c in reply.tool_calls)
    return max(1, math.ceil(chars / 4))


def usage_body(reply: Reply, prompt_tokens: int) -> dict[str, Any]:
    override = reply.usage or UsageOverride()
    prompt = override.prompt_tokens if override.prompt_tokens is not None else prompt_tokens
    completion = override.completion_tokens
    if completion is None:
        completion = estimate_completion_tokens(reply)
    total = override.total_tokens if override.total_tokens is not None else prompt + completion
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": total,
    }
    if override.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": override.cached_tokens}
    return usage


def call_id(reply: Reply, response_number: int, index: int) -> str:
    return reply.tool_calls[index].id or f"call_{response_number}_{index}"


def completion_body(
    reply: Reply, model: str, response_number: int, prompt_tokens: int
) -> dict[str, Any]:
    """The body of a non-streaming chat completion."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id(reply, response_number, index),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text()},
            }
            for index, call in enumerate(reply.tool_calls)
        ]
    return {
        "id": f"chatcmpl-{response_number}",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "system_fingerprint": None,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": reply.effective_finish_reason(),
            }
        ],
        "usage": usage_body(reply, prompt_tokens),
    }


def split(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)] or [""]


def stream_chunks(
    reply: Reply,
    model: str,
    response_number: int,
    prompt_tokens: int,
    include_usage: bool,
    text_chunk_chars: int,
    args_chunk_chars: int,
) -> list[dict[str, Any]]:
    """The chunk objects of a streamed reply, in order, as OpenAI sends them (without [DONE])."""
    head = {
        "id": f"chatcmpl-{response_number}",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "system_fingerprint": None,
    }

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        body = {
            **head,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }
        if include_usage:
            body["usage"] = None
        return body

    chunks = [chunk({"role": "assistant", "content": ""})]
    if reply.text:
        chunks += [chunk({"content": piece}) for piece in split(reply.text, text_chunk_chars)]
    for index, call in enumerate(reply.tool_calls):
        first, *rest = split(call.arguments_text(), args_chunk_chars)
        opening = {
            "index": index,
            "id": call_id(reply, response_number, index),
            "type": "function",
            "function": {"name": call.name, "arguments": first},
        }
        chunks.append(chunk({"tool_calls": [opening]}))
        chunks += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in rest
        ]
    chunks.append(chunk({}, reply.effective_finish_reason()))
    if include_usage:
        chunks.append({**head, "choices": [], "usage": usage_body(reply, prompt_tokens)})
    return chunks


ERROR_SHAPES: dict[int, tuple[str, str | None, str]] = {
    # status: (type, code, default message) as OpenAI answers them
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    429: (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again in 1s.",
    ),
    500: (
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body for `status` (400 is the context-length error: use that helper)."""
    kind, code, default = ERROR_SHAPES.get(status, ("server_error", None, f"HTTP {status}"))
    return {"error": {"message": message or default, "type": kind, "param": None, "code": code}}


def context_length_body(limit: int, prompt_tokens: int) -> dict[str, Any]:
    """OpenAI's exact 400 body for a prompt over the model's context window."""
    message = (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {prompt_tokens} tokens. Please reduce the length of the messages."
    )
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


ReplyLike = Reply | str | dict[str, Any]


def as_reply(value: ReplyLike) -> Reply:
    """Accept a Reply, a bare string (a text reply) or a dict in the Reply's JSON shape."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(text=value)
    return Reply.model_validate(value)
