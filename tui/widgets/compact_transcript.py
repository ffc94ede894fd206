"""A session's newest entries, cheaply, for a column of the side-by-side view.

Tools show as one line (a tool panel's title, never opened), streamed text is repainted a few
times a second from the transcript itself, and only the newest KEEP entries stay mounted.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from keel.tui.transcript import Entry, NoticeEntry, ToolEntry, Transcript, UserEntry
from keel.tui.widgets.following_scroll import FollowingScroll
from keel.tui.widgets.layout_sized import virtual_size_from_layout
from keel.tui.widgets.notice_line import NoticeLine
from keel.tui.widgets.tool_panel import panel_title
from keel.tui.widgets.user_block import UserBlock

_TOOL_STATES = ("running", "approval", "ok", "failed", "denied")


class ToolLine(Static):
    """One tool call as its panel's title line."""

    virtual_size = virtual_size_from_layout()

    def __init__(self, entry: ToolEntry) -> None:
        super().__init__(panel_title(entry), classes=f"-{entry.state}")

    def show_entry(self, entry: ToolEntry) -> None:
        self.update(panel_title(entry))
        for state in _TOOL_STATES:
            self.set_class(entry.state == state, f"-{state}")


class HiddenEntries(Static):
    """The first line while older entries are not mounted: they are in the session's own view."""

    def show_count(self, hidden: int) -> None:
        self.display = hidden > 0
        self.update(Text(f"▲ {hidden} earlier — Enter opens the whole session"))


def compact_widget(entry: Entry) -> Widget:
    if isinstance(entry, UserEntry):
        return UserBlock(entry)
    if isinstance(entry, ToolEntry):
        return ToolLine(entry)
    if isinstance(entry, NoticeEntry):
        return NoticeLine(entry)
    from keel.tui.widgets.assistant_block import (
        AssistantBlock,  # markdown loads with the first answer
    )

    return AssistantBlock(entry)


class CompactTranscript(FollowingScroll):
    """Entries [start, end) of a transcript, following its end; fed the transcript's Changes."""

    KEEP = 24  # entries mounted while following the end
    TRIM_BATCH = 8  # trimmed once this many more are mounted, so a trim (and a layout) is rare
    HARD_LIMIT = 200  # trimmed even while the person reads further up
    REPAINT_SECONDS = 0.25

    def __init__(self, transcript: Transcript, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.transcript = transcript
        self.start = 0
        self._widgets: dict[int, Widget] = {}
        self._hidden = HiddenEntries()
        self._composed = False
        self._streamed: set[int] = set()
        self._repaint_timer: Timer | None = None

    @property
    def end(self) -> int:
        return self.start + len(self._widgets)

    def entry_widgets(self) -> list[Widget]:
        return [self._widgets[index] for index in sorted(self._widgets)]

    def compose(self) -> ComposeResult:
        """The newest entries as they are now; Changes that arrived before this are already in them."""
        entries = self.transcript.entries
        self.start = max(0, len(entries) - self.KEEP)
        self._widgets = {
            index: compact_widget(entries[index]) for index in range(self.start, len(entries))
        }
        self._composed = True
        self._hidden.show_count(self.start)
        yield self._hidden
        yield from self._widgets.values()

    async def added(self, index: int) -> None:
        if not self._composed or index < self.end:
            return
        following = self.is_vertical_scroll_end
        widgets = [compact_widget(self.transcript.entries[i]) for i in range(self.end, index + 1)]
        self._widgets.update(zip(range(self.end, index + 1), widgets, strict=True))
        await self.mount_all(widgets)
        excess = len(self._widgets) - (self.KEEP if following else self.HARD_LIMIT)
        if excess >= (self.TRIM_BATCH if following else 1):
            await self._trim(excess)

    def updated(self, index: int) -> None:
        widget = self._widgets.get(index)
        if widget is not None:
            self._streamed.discard(index)
            widget.show_entry(self.transcript.entries[index])  # type: ignore[attr-defined]

    def streamed(self, index: int) -> None:
        """Text arrived for an answer: it is repainted from the transcript on the next tick."""
        if index in self._widgets:
            self._streamed.add(index)
            if self._repaint_timer is None:
                self._repaint_timer = self.set_timer(self.REPAINT_SECONDS, self._repaint)

    def _repaint(self) -> None:
        self._repaint_timer = None
        for index in sorted(self._streamed):
            self.updated(index)

    async def _trim(self, count: int) -> None:
        old = [self._widgets.pop(index) for index in range(self.start, self.start + count)]
        self.start += count
        self._hidden.show_count(self.start)
        await self.remove_children(old)
