"""Observation masking, the cheap first stage: old tool outputs become a one-line placeholder."""

from __future__ import annotations

import json
from collections.abc import Sequence

from keel.agent.messages import Message
from keel.agent.model.tokens import count_message
from keel.agent.protocol import ToolCall
from keel.prompts import plural

MASK_MARK = "[output omitted to save context"


def placeholder(message: Message, call: ToolCall | None) -> str:
    """One line naming what was there, so the model can fetch it again if it needs it."""
    args = ""
    if call is not None:
        try:
            parsed = json.loads(call.arguments or "{}")
            args = (
                ", ".join(f"{k}={json.dumps(v)[:60]}" for k, v in parsed.items())
                if isinstance(parsed, dict)
                else ""
            )
        except json.JSONDecodeError:
            args = call.arguments[:60]
    lines = message.content.count("\n") + 1
    return f"{MASK_MARK}: {message.name}({args}) returned {plural(lines, 'line')}, {plural(len(message.content), 'char')}; call it again if needed]"


def mask_boundary(history: Sequence[Message], keep_turns: int, keep_tokens: int) -> int:
    """The index before which tool outputs get masked.

    Everything older than the recent turns that fit in `keep_tokens` goes, but never the last `keep_turns`
    turns: masking in one large batch leaves room for many turns before the next pass, and every pass
    changes the request prefix.
    """
    turns = [i for i, m in enumerate(history) if m.role == "assistant" and m.tool_calls]
    if len(turns) <= keep_turns:
        return 0
    boundary = turns[-keep_turns] if keep_turns else len(history)
    tail = sum(count_message(m) for m in history[boundary:])
    for start in reversed(turns[:-keep_turns] if keep_turns else turns):
        turn_tokens = sum(count_message(m) for m in history[start:boundary])
        if tail + turn_tokens > keep_tokens:
            break
        tail += turn_tokens
        boundary = start
    return boundary


def mask_history(
    history: Sequence[Message], start: int, upto: int
) -> tuple[tuple[Message, ...], int]:
    """History with the tool outputs of history[start:upto] masked, and how many were; pure, so the fold and a
    preview of it agree."""
    calls = {c.id: c for m in history[:upto] for c in m.tool_calls}
    masked = 0
    result = list(history)
    for index in range(start, min(upto, len(history))):
        message = history[index]
        if message.role == "tool" and not message.content.startswith(MASK_MARK):
            text = placeholder(message, calls.get(message.tool_call_id or ""))
            result[index] = message.with_content(text)
            masked += 1
    return tuple(result), masked
