"""Token ids and logprobs in vLLM's shape (vLLM >= 0.10.2), for a scripted reply that has them.

A chat completions request asks with `"return_token_ids": true` (the prompt's ids, top level, in the first
chunk of a stream or the whole body; each choice's generated ids as `token_ids`) and `"logprobs": true` (each
generated token's logprob in `choices[i].logprobs.content[j].logprob`). A stream spreads the generated tokens
over its chunks, each chunk carrying the ids and logprobs of the tokens its delta came from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ReplyTokens(BaseModel):
    """What a scripted reply sends when the request asks for token ids and logprobs."""

    model_config = ConfigDict(extra="forbid")

    prompt_token_ids: list[int] = Field(default_factory=list)
    completion_token_ids: list[int] = Field(default_factory=list)
    logprobs: list[float] = Field(default_factory=list)  # one per completion token


@dataclass(frozen=True)
class TokensAsked:
    """Which of them a request asked for."""

    ids: bool = False
    logprobs: bool = False

    @classmethod
    def of(cls, body: dict[str, Any]) -> TokensAsked:
        return cls(ids=body.get("return_token_ids") is True, logprobs=body.get("logprobs") is True)


def logprobs_body(ids: list[int], logprobs: list[float]) -> dict[str, Any]:
    """A choice's `logprobs` as vLLM sends it; tokens are named as with `return_tokens_as_token_ids`."""
    return {
        "content": [
            {"token": f"token_id:{token}", "logprob": logprob, "bytes": None, "top_logprobs": []}
            for token, logprob in zip(ids, logprobs, strict=False)
        ]
    }


def add_to_completion(body: dict[str, Any], tokens: ReplyTokens | None, asked: TokensAsked) -> None:
    """Put the tokens asked for into a non-streamed completion body."""
    if tokens is None:
        return
    choice = body["choices"][0]
    if asked.ids:
        body["prompt_token_ids"] = tokens.prompt_token_ids
        choice["token_ids"] = tokens.completion_token_ids
    if asked.logprobs:
        choice["logprobs"] = logprobs_body(tokens.completion_token_ids, tokens.logprobs)


def add_to_stream(
    chunks: list[dict[str, Any]], tokens: ReplyTokens | None, asked: TokensAsked
) -> None:
    """Put the tokens asked for into a stream's chunks: the prompt's ids on the first (the role chunk), the
    generated ones spread in order over the chunks after it that have a choice (the finish chunk included)."""
    if tokens is None or not chunks:
        return
    if asked.ids:
        chunks[0]["prompt_token_ids"] = tokens.prompt_token_ids
    carriers = [chunk["choices"][0] for chunk in chunks[1:] if chunk.get("choices")]
    ids, logprobs = tokens.completion_token_ids, tokens.logprobs
    share, extra = divmod(len(ids), len(carriers)) if carriers else (0, 0)
    start = 0
    for number, choice in enumerate(carriers):
        end = start + share + (number < extra)
        if asked.ids:
            choice["token_ids"] = ids[start:end]
        if asked.logprobs:
            choice["logprobs"] = logprobs_body(ids[start:end], logprobs[start:end])
        start = end


IM_START, IM_END = (
    1,
    2,
)  # the template's two special ids; text is one id per UTF-8 byte, from BYTE_BASE
BYTE_BASE = 1000


def _text_ids(text: str) -> list[int]:
    return [BYTE_BASE + byte for byte in text.encode()]


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _body(text: str, calls: list[tuple[str, str]]) -> str:
    """An assistant turn's text with its calls, as the template writes them."""
    return text + "".join(f"<tool_call>{name} {arguments}</tool_call>" for name, arguments in calls)


def template_prompt_ids(body: dict[str, Any]) -> list[int]:
    """A request's prompt as a chat template tokenizes it: the tools, then each message
    (<|im_start|>role\\ncontent<|im_end|>\\n), then the assistant's opening. A prompt that adds messages
    to the last one extends that prompt and its completion exactly, as a real template's does."""
    ids = _text_ids(json.dumps(body.get("tools") or [], sort_keys=True))
    for message in body.get("messages") or ():
        calls = [
            (call["function"]["name"], call["function"]["arguments"])
            for call in message.get("tool_calls") or ()
        ]
        text = f"{message['role']}\n{_body(_content(message), calls)}"
        ids += [IM_START, *_text_ids(text), IM_END, *_text_ids("\n")]
    return [*ids, IM_START, *_text_ids("assistant\n")]


def template_tokens(body: dict[str, Any], text: str, calls: list[tuple[str, str]]) -> ReplyTokens:
    """The ids and logprobs of a reply (its text and (name, arguments) calls) to a request, by the template:
    the completion ends with <|im_end|>, which the next prompt holds after it."""
    completion = [*_text_ids(_body(text, calls)), IM_END]
    return ReplyTokens(
        prompt_token_ids=template_prompt_ids(body),
        completion_token_ids=completion,
        logprobs=[-((token * 7919) % 1000) / 1000 for token in completion],
    )
