"""How the direct client reads a reply: server-sent events as they arrive, or a whole completion from a server
that ignored `stream`, into a ReplyAssembler."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import suppress
from typing import Any

from pydantic_core import from_json

from keel.agent.core.errors import RetryableProviderError
from keel.agent.core.model.prompt_chain import split_prompt_ids
from keel.agent.core.model.reply import ReplyAssembler, usage_from


def without_prompt_ids(assembler: ReplyAssembler, payload: bytes) -> bytes:
    """A reply's JSON without its prompt's ids, which the token collector keeps unparsed (prompt_chain)."""
    if assembler.tokens is None:
        return payload
    payload, ids = split_prompt_ids(payload)
    if ids is not None:
        assembler.tokens.prompt_json = ids
    return payload


async def read_stream(
    assembler: ReplyAssembler, body: AsyncIterator[bytes], on_delta: Callable[[str], None]
) -> None:
    """Server-sent events until `[DONE]` (the body is read to its end, so the connection can be
    reused); a stream that stops short is a dropped connection."""
    parts: list[bytes] = []  # a line not yet ended, as it arrived (a prompt's ids make one long)
    done = False
    async for data in body:  # whatever arrived, split here: cheaper than a read per line
        if b"\n" not in data:
            parts.append(data)
            continue
        carried = sum(len(part) for part in parts)
        buffer, start = b"".join([*parts, data]) if carried else data, 0
        end = carried + data.index(b"\n")
        # line by line (memchr): bytes.split walks a long line byte by byte
        while end >= 0:
            done = done or _apply_event_line(assembler, buffer, start, end, on_delta)
            start, end = end + 1, buffer.find(b"\n", end + 1)
        parts = [buffer[start:]] if start < len(buffer) else []
    rest = b"".join(parts)
    done = done or _apply_event_line(assembler, rest, 0, len(rest), on_delta)
    if not done and assembler.finish_reason is None:
        raise RetryableProviderError(
            "Connection error: the reply stream ended before it was complete", "APIConnectionError"
        )


def _apply_event_line(
    assembler: ReplyAssembler, buffer: bytes, start: int, end: int, on_delta: Callable[[str], None]
) -> bool:
    """Apply the SSE line `buffer[start:end]`; True at `[DONE]`. The line's payload is the one copy made of it
    (a prompt's ids make a line of hundreds of kilobytes)."""
    while start < end and buffer[start] in b" \t\r":
        start += 1
    if not buffer.startswith(b"data:", start, end):
        return False
    start += 5
    if buffer[start : start + 1] == b" ":
        start += 1
    payload = buffer[start:end].strip()
    if payload == b"[DONE]":
        return True
    chunk = _parsed(without_prompt_ids(assembler, payload))
    if not isinstance(chunk, dict):
        return False
    if "error" in chunk:
        error = chunk["error"]
        message = str(error.get("message", error)) if isinstance(error, dict) else str(error)
        raise RetryableProviderError(f"the server failed mid-reply: {message}", "APIError")
    _apply_chunk(assembler, chunk, on_delta)
    return False


def _parsed(payload: bytes) -> Any:
    """The chunk's JSON (pydantic's parser: twice as fast as json's; json's for what it refuses, such as a
    lone surrogate escape)."""
    with suppress(ValueError):
        return from_json(payload)
    try:
        return json.loads(payload)
    except ValueError:
        raise RetryableProviderError(
            f"the server sent a malformed event: {payload[:200]!r}", "APIError"
        ) from None


def _apply_chunk(
    assembler: ReplyAssembler, chunk: dict[str, Any], on_delta: Callable[[str], None]
) -> None:
    if assembler.tokens is not None:
        assembler.tokens.add_chunk(chunk)
    usage = chunk.get("usage")
    if usage:
        details = usage.get("prompt_tokens_details") or {}
        assembler.usage = usage_from(
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
            usage.get("total_tokens"),
            details.get("cached_tokens"),
        )
    for choice in chunk.get("choices") or ():
        assembler.finish_reason = choice.get("finish_reason") or assembler.finish_reason
        delta = choice.get("delta") or {}
        if delta.get("content"):
            on_delta(assembler.add_text(delta["content"]))
        for piece in delta.get("tool_calls") or ():
            function = piece.get("function") or {}
            assembler.add_tool_piece(
                piece.get("index") or 0,
                piece.get("id"),
                function.get("name"),
                function.get("arguments"),
            )


def read_whole(
    assembler: ReplyAssembler, completion: dict[str, Any], on_delta: Callable[[str], None]
) -> None:
    """A server that ignored `stream` and sent the whole completion at once."""
    choices = completion.get("choices") or [{}]
    message = choices[0].get("message") or {}
    chunk = {
        "usage": completion.get("usage"),
        "choices": [
            {
                **choices[0],
                "finish_reason": choices[0].get("finish_reason") or "stop",
                "delta": message,
            }
        ],
        "prompt_token_ids": completion.get("prompt_token_ids"),
    }
    for index, call in enumerate(message.get("tool_calls") or ()):
        call.setdefault("index", index)
    _apply_chunk(assembler, chunk, on_delta)
