"""Observation masking, the cheap first stage: which old tool outputs become a one-line placeholder (the
placeholder itself is keel.agent.core.masked_outputs, which the fold applies)."""

from __future__ import annotations

from collections.abc import Sequence

from keel.agent.core.messages import Message
from keel.agent.core.model.tokens import count_message


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
