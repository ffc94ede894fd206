"""One session in the side-by-side view: a header with its state and tokens over its newest entries."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Click
from textual.message import Message
from textual.widgets import Static

from keel.tui.agents import AgentHandle
from keel.tui.transcript import Change
from keel.tui.widgets.compact_transcript import CompactTranscript
from keel.tui.widgets.session_row import task_and_session_tokens

STATUS_LABELS = {
    "new": ("○", "new"),
    "idle": ("○", "idle"),
    "running": ("●", "running"),
    "approval": ("?", "waiting for approval"),
    "done": ("✓", "done"),
    "stopped": ("■", "stopped"),
    "interrupted": ("■", "interrupted"),
    "error": ("✗", "error"),
}


def header_text(handle: AgentHandle) -> Text:
    stats = handle.stats
    mark, label = STATUS_LABELS[stats.status]
    text = Text.assemble((f"{mark} {handle.name}", "bold"), f"  {label}\n")
    where = f"⎇ {handle.branch}" if handle.branch else str(handle.settings.cwd)
    text.append(f"{task_and_session_tokens(handle)} tokens · {where}", "dim")
    return text


class ColumnHeader(Static):
    """A click here opens the session in the main view."""

    def __init__(self, handle: AgentHandle) -> None:
        super().__init__()
        self.handle = handle
        self._shown = Text()
        self.show_status()

    def show_status(self) -> None:
        text = header_text(self.handle)
        if text != self._shown:
            self._shown = text
            self.update(text)
        for status in STATUS_LABELS:
            self.set_class(self.handle.stats.status == status, f"-{status}")

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(SideColumn.Open(self.handle))


class SideColumn(Vertical):
    class Open(Message):
        """The person asked to open this column's session in the main view."""

        def __init__(self, handle: AgentHandle) -> None:
            super().__init__()
            self.handle = handle

    def __init__(self, handle: AgentHandle) -> None:
        super().__init__()
        self.handle = handle
        self.header = ColumnHeader(handle)
        self.view = CompactTranscript(handle.transcript)

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.view

    async def apply(self, changes: list[Change]) -> None:
        """Fold in what one event changed in this column's session."""
        for change in changes:
            if change.kind == "added":
                await self.view.added(change.index)
            elif change.kind == "updated":
                self.view.updated(change.index)
            elif change.kind == "delta":
                self.view.streamed(change.index)
        if any(change.kind in ("stats", "approval") for change in changes):
            self.header.show_status()
