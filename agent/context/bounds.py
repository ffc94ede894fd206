"""What a resumed session loads into its context: no one text of its log over a share of the model's window,
so a huge prompt or output in an old log cannot make every request overflow (it is cut, with a note)."""

from __future__ import annotations

from collections.abc import Iterable

from keel.agent.protocol import (
    AnyEvent,
    AssistantMessage,
    ContextSummarized,
    ToolFinished,
    UserMessage,
)
from keel.prompts import plural, render

WINDOW_SHARE = 8  # one text takes at most 1/8 of the window
CHARS_PER_TOKEN = 3  # fewer than most text has: the cut errs on the small side
MIN_CHARS = 2_000


def text_limit(window: int) -> int:
    """The most characters one text of a resumed log keeps, for a window of `window` tokens."""
    return max(MIN_CHARS, window // WINDOW_SHARE * CHARS_PER_TOKEN)


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


def bound_event(event: AnyEvent, limit: int) -> AnyEvent:
    """The event with each text the model would read cut to `limit` characters (itself when none is over)."""
    if isinstance(event, UserMessage) and len(event.text) > limit:
        return event.model_copy(update={"text": cut_text(event.text, limit)})
    if isinstance(event, ToolFinished) and len(event.output) > limit:
        return event.model_copy(update={"output": cut_text(event.output, limit)})
    if isinstance(event, ContextSummarized) and len(event.summary) > limit:
        return event.model_copy(update={"summary": cut_text(event.summary, limit)})
    if isinstance(event, AssistantMessage) and (
        len(event.text) > limit or any(len(c.arguments) > limit for c in event.tool_calls)
    ):
        calls = [
            c.model_copy(update={"arguments": cut_text(c.arguments, limit)})
            for c in event.tool_calls
        ]
        return event.model_copy(update={"text": cut_text(event.text, limit), "tool_calls": calls})
    return event


def bound_events(events: Iterable[AnyEvent], window: int) -> list[AnyEvent]:
    """A resumed log's events as the session folds them: every text within `text_limit(window)`."""
    limit = text_limit(window)
    return [bound_event(event, limit) for event in events]
