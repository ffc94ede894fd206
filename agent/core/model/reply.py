"""One model reply, assembled from streamed pieces the same way whichever transport carried them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from keel.agent.core.model.tokens import count_json, count_text
from keel.agent.core.model.turn_tokens import TokenCollector
from keel.agent.core.protocol import TokenUsage, ToolCall, TurnTokens

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """Text a provider streamed, with lone UTF-16 surrogates (not encodable, so unloggable) as U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)


class ModelReply(BaseModel):
    """What one model call produced."""

    text: str
    tool_calls: list[ToolCall]
    usage: TokenUsage
    cost: float | None = None
    finish_reason: str | None = None
    tokens: TurnTokens | None = None  # with record_tokens only


@dataclass
class _ToolCallBuffer:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class ReplyAssembler:
    """Collects a streamed reply's text, tool-call fragments, finish reason and usage."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _ToolCallBuffer] = field(default_factory=dict)
    usage: TokenUsage | None = None
    finish_reason: str | None = None
    tokens: TokenCollector | None = None  # collecting token ids and logprobs (record_tokens)

    def add_text(self, piece: str) -> str:
        clean = valid_text(piece)
        self.text.append(clean)
        return clean

    def add_tool_piece(
        self, index: int, call_id: str | None, name: str | None, arguments: str | None
    ) -> None:
        buffer = self.calls.setdefault(index, _ToolCallBuffer())
        buffer.id = call_id or buffer.id
        buffer.name = valid_text(name or "") or buffer.name
        if arguments:
            buffer.arguments.append(valid_text(arguments))

    def reply(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        price: Callable[[TokenUsage], float | None],
    ) -> ModelReply:
        """The finished reply, priced; usage is counted here when the provider reported none."""
        text = "".join(self.text)
        tool_calls = [
            ToolCall(id=b.id or f"call_{i}", name=b.name, arguments="".join(b.arguments))
            for i, b in sorted(self.calls.items())
        ]
        usage = self.usage
        if usage is None or usage.total_tokens == 0:
            # the whole request counts: system prompt, calls and results, and the tools' schemas
            prompt = count_json(messages) + (count_json(tools) if tools else 0)
            completion = count_text(text) + sum(
                count_text(c.name) + count_text(c.arguments) for c in tool_calls
            )
            usage = TokenUsage(
                prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
            )
        return ModelReply(
            text=text,
            tool_calls=tool_calls,
            usage=usage,
            cost=price(usage),
            finish_reason=self.finish_reason,
            tokens=self.tokens.result(self.finish_reason) if self.tokens is not None else None,
        )


def usage_from(prompt: Any, completion: Any, total: Any, cached: Any) -> TokenUsage:
    """Usage from a provider's (possibly missing) figures."""
    prompt_tokens, completion_tokens = int(prompt or 0), int(completion or 0)
    return TokenUsage(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=int(total or 0) or prompt_tokens + completion_tokens,
        cached_tokens=int(cached or 0),
    )
