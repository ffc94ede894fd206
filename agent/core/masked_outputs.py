"""Masked tool outputs, the state's side of observation masking: an old output replaced by a one-line
placeholder. The fold applies it (context.masked); when to mask is the context policy's (agent/core/context)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from keel.agent.core.messages import Message
from keel.agent.core.protocol import ToolCall
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
