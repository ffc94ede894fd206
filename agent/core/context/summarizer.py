"""Self-summarization: the same model writes a structured summary of the older part of the history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from keel.agent.core.errors import ContextWindowExceeded
from keel.agent.core.messages import Message
from keel.agent.core.model.client import ChatModel
from keel.agent.core.model.tokens import count_message, count_text
from keel.agent.core.protocol import TokenUsage, TurnTokens
from keel.agent.core.state import SessionState
from keel.prompts import render

SUMMARY_OUTPUT_SHARE = 0.12  # of the window, reserved for the summary the model writes
RECENT_SHARE = 0.25  # of the window, for the most recent turns kept verbatim
RECENT_SHARE_REQUESTED = 0.05  # when a person asks to compact, they want most of it folded
TOOL_RESULT_CHARS = (2_000, 400, 100)  # tried in turn until the transcript fits


@dataclass
class Summary:
    """What the summarizer wrote, how many recent messages stay verbatim, and what the call cost."""

    text: str
    kept_messages: int
    usage: TokenUsage
    cost: float | None = None
    tokens: TurnTokens | None = None  # with record_tokens only


def kept_tail(history: Sequence[Message], limit: int) -> int:
    """How many of the last messages to keep verbatim: whole turns, starting at an assistant message."""
    total, start = 0, len(history)
    for index in range(len(history) - 1, -1, -1):
        total += count_message(history[index])
        if total > limit:
            break
        start = index
    while start < len(history) and history[start].role != "assistant":
        start += 1
    return len(history) - start


def _render_message(message: Message, tool_chars: int) -> str:
    if message.role == "tool":
        body = message.content
        if len(body) > tool_chars:
            body = (
                body[:tool_chars] + f"\n[... {len(message.content) - tool_chars} more characters]"
            )
        return f"TOOL RESULT ({message.name}):\n{body}"
    calls = "".join(f"\n-> called {c.name}({c.arguments})" for c in message.tool_calls)
    return f"{message.role.upper()}:\n{message.content}{calls}"


def render_transcript(messages: Sequence[Message], limit: int) -> tuple[str, int]:
    """The messages as text within `limit` tokens: tool results cut shorter, then the oldest dropped."""
    for tool_chars in TOOL_RESULT_CHARS:
        parts = [_render_message(m, tool_chars) for m in messages]
        if count_text("\n\n".join(parts)) <= limit:
            return "\n\n".join(parts), 0
    kept: list[str] = []
    total = 0
    for part in reversed(parts):
        size = count_text(part) + 2
        if total + size > limit:
            break
        kept.append(part)
        total += size
    return "\n\n".join(reversed(kept)), len(parts) - len(kept)


class Summarizer:
    """Writes a summary with the session's own model, sized so the request itself fits the window."""

    def __init__(self, model: ChatModel, window: int) -> None:
        self.model = model
        self.window = window

    async def summarize(
        self, state: SessionState, shrink: int = 0, requested: bool = False
    ) -> Summary:
        """Summarize all but the recent turns; `shrink` > 0 retries with less, after an overflow. The state is
        only read: the caller emits the summary as an event."""
        recent_limit = (
            int(self.window * (RECENT_SHARE_REQUESTED if requested else RECENT_SHARE)) >> shrink
        )
        kept = kept_tail(state.history, recent_limit)
        if kept == len(state.history):
            kept = 0  # everything fits: a requested compaction summarizes it all
        older = state.history[: len(state.history) - kept]
        output_tokens = max(256, int(self.window * SUMMARY_OUTPUT_SHARE))
        instructions = render("summarize")
        previous = state.summaries[-2:]
        fixed = (
            count_text(instructions)
            + count_text(state.task_prompt)
            + sum(count_text(s) for s in previous)
        )
        room = int((self.window - output_tokens - fixed - 200) * 0.9) >> shrink
        if room < 200:
            raise ContextWindowExceeded(
                "the context window is too small to summarize this session", "ContextWindowExceeded"
            )
        transcript, dropped = render_transcript(older, room)
        request = render(
            "summarize_request",
            previous=previous,
            task=state.task_prompt,
            transcript=transcript,
            dropped=dropped,
        )
        messages = [
            {"role": "system", "content": instructions},
            {"role": "user", "content": request},
        ]
        reply = await self.model.complete(messages, None, lambda _: None, max_tokens=output_tokens)
        text = reply.text.strip() or "(the model wrote an empty summary)"
        return Summary(
            text=text, kept_messages=kept, usage=reply.usage, cost=reply.cost, tokens=reply.tokens
        )
