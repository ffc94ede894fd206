"""The model's checklist beside the transcript: each item with its status, hidden while there is none."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

MARKS = {"pending": ("○", "dim"), "in_progress": ("◐", "bold"), "done": ("●", "green")}


def todo_text(items: list[Any]) -> Text:
    """The items one per line, each after its status mark, and a count of those done on top."""
    done = sum(item.status == "done" for item in items)
    text = Text.assemble(("Plan", "bold"), (f"  {done}/{len(items)} done", "dim"))
    for item in items:
        mark, style = MARKS.get(item.status, ("○", ""))
        body_style = "dim strike" if item.status == "done" else style
        text.append("\n")
        text.append(f"{mark} ", style)
        text.append(item.content, body_style)
    return text


class TodoPanel(Static):
    """Shows the selected session's todo list (from todo.updated, as the transcript keeps it)."""

    _shown: Text | None = None

    def show_items(self, items: list[Any]) -> None:
        """Repaint only when the list changed; no list, no panel."""
        self.set_class(bool(items), "-shown")
        text = todo_text(items) if items else Text()
        if text != self._shown:
            self._shown = text
            self.update(text)
