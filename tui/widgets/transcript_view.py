"""The selected session's transcript, windowed: only the newest entries are mounted, so appends stay flat."""

from __future__ import annotations

import inspect
from typing import Any

from textual.containers import VerticalScroll
from textual.widget import Widget

from tui.transcript import AssistantEntry, Entry, NoticeEntry, ToolEntry, Transcript, UserEntry
from tui.widgets.earlier_marker import EarlierMarker
from tui.widgets.notice_line import NoticeLine
from tui.widgets.tool_panel import ToolPanel
from tui.widgets.user_block import UserBlock


def entry_widget(entry: Entry) -> Widget:
    if isinstance(entry, UserEntry):
        return UserBlock(entry)
    if isinstance(entry, ToolEntry):
        return ToolPanel(entry)
    if isinstance(entry, NoticeEntry):
        return NoticeLine(entry)
    # Rich's Markdown (markdown-it) costs ~0.1 s to import: loaded with the first answer or by the warm-up.
    from tui.widgets.assistant_block import AssistantBlock

    assert isinstance(entry, AssistantEntry)
    return AssistantBlock(entry)


class TranscriptView(VerticalScroll):
    """Mounts entries [start, end) of a Transcript; older ones come back a page at a time on request."""

    WINDOW = 40  # entries kept mounted while following the end
    HARD_LIMIT = 400  # trimmed even while the person reads further up
    PAGE = 40

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.transcript: Transcript | None = None
        self.start = 0
        self._widgets: dict[int, Widget] = {}
        self._marker = EarlierMarker(0)

    @property
    def end(self) -> int:
        return self.start + len(self._widgets)

    def mounted_entries(self) -> int:
        return len(self._widgets)

    async def show(self, transcript: Transcript) -> None:
        """Replace what is shown with the newest window of another transcript."""
        self.transcript = transcript
        await self.remove_children()
        total = len(transcript.entries)
        self.start = max(0, total - self.WINDOW)
        widgets = [entry_widget(entry) for entry in transcript.entries[self.start :]]
        self._widgets = dict(zip(range(self.start, total), widgets, strict=True))
        self._marker = EarlierMarker(self.start)
        self._marker.display = self.start > 0
        await self.mount_all([self._marker, *widgets])
        self.anchor()

    async def added(self, index: int) -> None:
        assert self.transcript is not None
        if index != self.end:
            await self.show(self.transcript)
            return
        following = self.is_vertical_scroll_end
        widget = entry_widget(self.transcript.entries[index])
        self._widgets[index] = widget
        await self.mount(widget)
        excess = len(self._widgets) - (self.WINDOW if following else self.HARD_LIMIT)
        if excess > 0:
            await self._trim(excess)

    async def updated(self, index: int) -> None:
        widget = self._widgets.get(index)
        if widget is not None and self.transcript is not None:
            result = widget.show_entry(self.transcript.entries[index])  # type: ignore[attr-defined]
            if inspect.isawaitable(result):
                await result

    async def streamed(self, index: int, fragment: str) -> None:
        widget = self._widgets.get(index)
        if widget is not None and hasattr(widget, "stream"):
            widget.stream(fragment)

    async def _trim(self, count: int) -> None:
        old = [self._widgets.pop(index) for index in range(self.start, self.start + count)]
        self.start += count
        self._marker.set_hidden(self.start)
        self._marker.display = True
        await self.remove_children(old)

    async def on_earlier_marker_show_earlier(self, message: EarlierMarker.ShowEarlier) -> None:
        message.stop()
        if self.transcript is None or self.start == 0:
            return
        first = max(0, self.start - self.PAGE)
        widgets = [entry_widget(entry) for entry in self.transcript.entries[first : self.start]]
        self._widgets.update(zip(range(first, self.start), widgets, strict=True))
        self.start = first
        self._marker.set_hidden(first)
        self._marker.display = first > 0
        await self.mount_all(widgets, after=self._marker)
