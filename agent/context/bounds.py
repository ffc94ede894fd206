"""What a resumed session loads into its context: no one text of its log over a share of the model's window,
so a huge prompt or output in an old log cannot make every request overflow (it is cut, with a note)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from pydantic import BaseModel

from keel.agent.model.tokens import count_text
from keel.agent.protocol import (
    AnyEvent,
    AssistantMessage,
    ContextSummarized,
    ToolFinished,
    UserMessage,
)
from keel.prompts import plural, render

M = TypeVar("M", bound=BaseModel)

WINDOW_SHARE = 4  # one text takes at most a quarter of the window
MAX_CHARS_PER_TOKEN = 6  # more than text has: a cut this long is counted, never a whole huge text
MIN_TOKENS = 500


def token_limit(window: int) -> int:
    """The most tokens one text of a resumed log keeps, for a window of `window` tokens."""
    return max(MIN_TOKENS, window // WINDOW_SHARE)


def fit_text(text: str, tokens: int) -> str:
    """`text` when it is within `tokens`; else its head and tail, with a note of what was cut, within them.
    A text no longer in characters than `tokens` is within them and is not counted."""
    if len(text) <= tokens:
        return text
    candidate = cut_text(text, tokens * MAX_CHARS_PER_TOKEN)
    counted = count_text(candidate)
    if counted <= tokens:
        return candidate
    return cut_text(text, int(len(candidate) * tokens / counted * 0.9))


def cut_text(text: str, limit: int) -> str:
    """`text` when it is within `limit` characters; else its head and tail with a note of what was cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    note = render(
        "cut_content",
        cut=plural(len(text) - limit, "character"),
        reason="the text was too long for the model's context window when the session resumed",
    )
    return f"{text[:head]}\n{note}\n{text[len(text) - tail :]}"


def bound_event(event: AnyEvent, tokens: int) -> AnyEvent:
    """The event with each text the model would read fitted to `tokens` (itself when none is over)."""
    if isinstance(event, UserMessage):
        return _with(event, "text", fit_text(event.text, tokens))
    if isinstance(event, ToolFinished):
        return _with(event, "output", fit_text(event.output, tokens))
    if isinstance(event, ContextSummarized):
        return _with(event, "summary", fit_text(event.summary, tokens))
    if isinstance(event, AssistantMessage):
        calls = [_with(c, "arguments", fit_text(c.arguments, tokens)) for c in event.tool_calls]
        text = fit_text(event.text, tokens)
        if text is not event.text or any(a is not b for a, b in zip(calls, event.tool_calls)):
            return event.model_copy(update={"text": text, "tool_calls": calls})
    return event


def _with(model: M, name: str, value: str) -> M:
    """`model` itself when `value` is its field unchanged, else a copy with it."""
    return model if value is getattr(model, name) else model.model_copy(update={name: value})


def bound_events(events: Iterable[AnyEvent], window: int) -> list[AnyEvent]:
    """A resumed log's events as the session folds them: every text within `token_limit(window)`."""
    tokens = token_limit(window)
    return [bound_event(event, tokens) for event in events]
