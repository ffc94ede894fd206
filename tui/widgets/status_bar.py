"""The bottom line: the selected session's model, how full its context is, the task's tokens against its
budget, the session's tokens and cost, and its state."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from keel.tui import format as fmt
from keel.tui.transcript import SessionStats


def status_text(name: str, stats: SessionStats) -> Text:
    context = (
        f"context {fmt.percent(stats.context_tokens, stats.context_window)} "
        f"({fmt.tokens(stats.context_tokens)}/{fmt.tokens(stats.context_window)})"
        if stats.context_window
        else "context –"
    )
    parts: list[str | tuple[str, str]] = [
        (name, "bold"),
        stats.model or "no model (/model NAME)",
        context,
        f"task {fmt.tokens(stats.used)}/{fmt.tokens(stats.budget)} tokens",
        f"session {fmt.tokens(stats.session_tokens)} tokens · {fmt.cost(stats.cost)}",
        f"{stats.status} · {stats.activity}" if stats.activity else stats.status,
    ]
    if stats.plan_mode:
        parts.insert(1, ("plan mode", "bold"))
    text = Text()
    for position, part in enumerate(parts):
        if position:
            text.append(" │ ", "dim")
        if isinstance(part, tuple):
            text.append(*part)
        else:
            text.append(part)
    return text


class StatusBar(Static):
    _shown: Text | None = None

    def show_stats(self, name: str, stats: SessionStats) -> None:
        """Repaint only a changed line (most events change nothing); one line never needs a layout."""
        text = status_text(name, stats)
        if text != self._shown:
            self._shown = text
            self.update(text, layout=False)
