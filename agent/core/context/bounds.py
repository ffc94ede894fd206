"""What a resumed session loads into its context: a text of its log over the model's whole window, which no live
session could have held, is cut to a share of the window (with a note), so a huge prompt or output in an old log
cannot make every request overflow. Any other text is loaded whole, as the live session had it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from pydantic import BaseModel

from keel.agent.core.model.tokens import count_text
from keel.agent.core.protocol import (
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


def fit_text(text: str, tokens: int, over: int | None = None) -> str:
    """`text` when it is within `over` tokens (default: `tokens`); else its head and tail, with a note of what
    was cut, within `tokens`. A text no longer in characters than `over` is within it and is not counted, nor
    is one too long in characters to be."""
    over = tokens if over is None else over
    if len(text) <= over:
        return text
    if over > tokens and len(text) <= over * MAX_CHARS_PER_TOKEN and count_text(text) <= over:
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


def bound_event(event: AnyEvent, tokens: int, over: int | None = None) -> AnyEvent:
    """The event with each text the model would read that is over `over` tokens (default: `tokens`) fitted
    to `tokens` (itself when none is over)."""
    if isinstance(event, UserMessage):
        return _with(event, "text", fit_text(event.text, tokens, over))
    if isinstance(event, ToolFinished):
        return _with(event, "output", fit_text(event.output, tokens, over))
    if isinstance(event, ContextSummarized):
        return _with(event, "summary", fit_text(event.summary, tokens, over))
    if isinstance(event, AssistantMessage):
        calls = [
            _with(c, "arguments", fit_text(c.arguments, tokens, over)) for c in event.tool_calls
        ]
        text = fit_text(event.text, tokens, over)
        if text is not event.text or any(a is not b for a, b in zip(calls, event.tool_calls)):
            return event.model_copy(update={"text": text, "tool_calls": calls})
    return event


def _with(model: M, name: str, value: str) -> M:
    """`model` itself when `value` is its field unchanged, else a copy with it."""
    return model if value is getattr(model, name) else model.model_copy(update={name: value})


def bound_events(events: Iterable[AnyEvent], window: int) -> list[AnyEvent]:
    """A resumed log's events as the session folds them: a text over the whole window cut to
    `token_limit(window)`; the rest as they were (the live session held them: its resume holds them too)."""
    tokens = token_limit(window)
    return [bound_event(event, tokens, window) for event in events]
