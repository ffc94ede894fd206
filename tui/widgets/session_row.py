"""One session in the session list: its state, name, model, the task's tokens against its budget and the
session's total."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import ListItem, Static

from keel.tui import format as fmt
from keel.tui.agents import AgentHandle

STATUS_MARKS = {
    "new": ("○", "new"),
    "idle": ("○", "idle"),
    "running": ("●", "running"),
    "approval": ("?", "needs approval"),
    "done": ("✓", "done"),
    "stopped": ("■", "stopped"),
    "interrupted": ("■", "interrupted"),
    "error": ("✗", "error"),
}
_STATUSES = tuple(STATUS_MARKS)
SHOWN_CHILDREN = 3  # a session's latest subagents, under its row


def task_and_session_tokens(handle: AgentHandle) -> str:
    """`task 2.9k/50k · total 59.9k`: the task's tokens against its budget, then the session's."""
    stats = handle.stats
    return (
        f"task {fmt.tokens(stats.used)}/{fmt.tokens(stats.budget)}"
        f" · total {fmt.tokens(stats.session_tokens)}"
    )


def row_text(handle: AgentHandle) -> Text:
    stats = handle.stats
    mark, label = STATUS_MARKS[stats.status]
    text = Text.assemble((f"{mark} ", "bold"), (handle.name, "bold"), f"  {label}\n")
    text.append(fmt.one_line(stats.model or "no model", 26) + "\n", "dim")
    if handle.branch:
        text.append(fmt.one_line(f"⎇ {handle.branch}", 26) + "\n", "dim")
    text.append(task_and_session_tokens(handle), "dim")
    if (earlier := len(stats.children) - SHOWN_CHILDREN) > 0:
        text.append(f"\n  ↳ {fmt.plural(earlier, 'earlier subagent')}", "dim")
    for child in stats.children[-SHOWN_CHILDREN:]:
        child_mark, child_label = STATUS_MARKS[child.status]
        done = f" {fmt.tokens(child.tokens)}" if child.status != "running" else f" {child_label}"
        text.append("\n  ")
        text.append(fmt.one_line(f"↳ {child_mark} {child.name}{done}", 24), "dim")
    return text


class SessionRow(ListItem):
    def __init__(self, handle: AgentHandle) -> None:
        super().__init__()
        self.handle = handle
        self._shown = row_text(handle)
        self._label = Static(self._shown)

    def compose(self) -> ComposeResult:
        yield self._label

    def on_mount(self) -> None:
        self.refresh_row()

    def refresh_row(self) -> None:
        """Repaint only a changed row (most events change nothing); only a new line needs a layout."""
        text = row_text(self.handle)
        if text != self._shown:
            lines_changed = text.plain.count("\n") != self._shown.plain.count("\n")
            self._shown = text
            self._label.update(text, layout=lines_changed)
        for status in _STATUSES:
            self.set_class(self.handle.stats.status == status, f"-{status}")
