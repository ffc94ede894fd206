"""The selected session's transcript, windowed: only the newest entries are mounted, so appends stay flat.

Textual lays out (and the test pilot visits) every mounted widget on each append, so an append
costs more the more is mounted. Following the end, the view keeps about a screen and a quarter of
entries and drops older ones, a few at a time, as new ones come; scrolled up, it keeps up to
HARD_LIMIT. Scrolling to the top of the window, or Enter on the marker there, brings earlier entries
back a page at a time.
"""

from __future__ import annotations

import inspect
from typing import Any

from textual.app import ComposeResult
from textual.widget import Widget

from keel.tui.transcript import AssistantEntry, Entry, NoticeEntry, ToolEntry, Transcript, UserEntry
from keel.tui.widgets.earlier_marker import EarlierMarker
from keel.tui.widgets.following_scroll import FollowingScroll
from keel.tui.widgets.notice_line import NoticeLine


def entry_widget(entry: Entry) -> Widget:
    """The widget of an entry; those a new session's first frame does not show load with their first use."""
    if isinstance(entry, NoticeEntry):
        return NoticeLine(entry)
    if isinstance(entry, UserEntry):
        from keel.tui.widgets.user_block import UserBlock

        return UserBlock(entry)
    if isinstance(entry, ToolEntry):
        from keel.tui.widgets.tool_panel import ToolPanel

        return ToolPanel(entry)
    # Rich's Markdown (markdown-it) costs ~0.1 s to import: loaded with the first answer or by the warm-up.
    from keel.tui.widgets.assistant_block import AssistantBlock

    assert isinstance(entry, AssistantEntry)
    return AssistantBlock(entry)


class TranscriptView(FollowingScroll):
    """Mounts entries [start, end) of a Transcript; older ones come back a page at a time on request."""

    WINDOW = 40  # entries mounted when a transcript is shown
    FOLLOW_SCREENS = 1.25  # following the end, entries wholly above this many screens are trimmed
    TRIM_BATCH = 8  # ... once this many are: a removal costs a second layout, so it is rare
    HARD_LIMIT = 400  # trimmed even while the person reads further up
    PAGE = 40

    def __init__(self, transcript: Transcript | None = None, **kwargs: Any) -> None:
        """With a transcript, its newest window is composed with the view: no mount before a paint."""
        super().__init__(**kwargs)
        self.transcript: Transcript | None = None
        self.start = 0
        self._widgets: dict[int, Widget] = {}
        self._marker = EarlierMarker(0)
        self._loading_earlier = False
        if transcript is not None:
            self._take_window(transcript)

    def compose(self) -> ComposeResult:
        yield self._marker
        yield from self._widgets.values()

    @property
    def end(self) -> int:
        return self.start + len(self._widgets)

    def mounted_entries(self) -> int:
        return len(self._widgets)

    def _take_window(self, transcript: Transcript) -> None:
        """Widgets for the newest WINDOW entries of a transcript, and the marker above them."""
        self.transcript = transcript
        total = len(transcript.entries)
        self.start = max(0, total - self.WINDOW)
        widgets = [entry_widget(entry) for entry in transcript.entries[self.start :]]
        self._widgets = dict(zip(range(self.start, total), widgets, strict=True))
        self._marker = EarlierMarker(self.start)
        self._marker.display = self.start > 0

    async def show(self, transcript: Transcript) -> None:
        """Replace what is shown with the newest window of another transcript."""
        await self.remove_children()
        self._take_window(transcript)
        await self.mount_all([self._marker, *self._widgets.values()])
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
        if following:
            hidden = self._entries_above_follow_rows()
            if hidden >= self.TRIM_BATCH:
                await self._trim(hidden)
        elif len(self._widgets) > self.HARD_LIMIT:
            await self._trim(len(self._widgets) - self.HARD_LIMIT)

    def _entries_above_follow_rows(self) -> int:
        """How many of the oldest mounted entries lie wholly above the last FOLLOW_SCREENS screens.

        Heights come from the last layout (the entry just mounted counts as 0 rows), so this never
        trims what would be on screen; before the first layout it trims nothing.
        """
        rows_to_keep = self.FOLLOW_SCREENS * self.container_size.height
        if not rows_to_keep:
            return 0
        rows = 0
        for index in range(self.end - 1, self.start - 1, -1):
            widget = self._widgets[index]
            rows += widget.outer_size.height + widget.styles.margin.top
            if rows >= rows_to_keep:
                return index - self.start
        return 0

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
        await self._show_earlier()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolled to the top of the window: the page before it comes in, and the view stays put."""
        super().watch_scroll_y(old_value, new_value)
        if new_value == 0 < old_value and self.start > 0 and not self._loading_earlier:
            self._loading_earlier = True
            self.call_later(self._show_earlier, True)

    async def _show_earlier(self, keep_place: bool = False) -> None:
        if self.transcript is None or self.start == 0:
            self._loading_earlier = False
            return
        height_before = self.virtual_size.height
        first = max(0, self.start - self.PAGE)
        widgets = [entry_widget(entry) for entry in self.transcript.entries[first : self.start]]
        self._widgets.update(zip(range(first, self.start), widgets, strict=True))
        self.start = first
        self._marker.set_hidden(first)
        self._marker.display = first > 0
        await self.mount_all(widgets, after=self._marker)

        def stay_put() -> None:
            added = self.virtual_size.height - height_before
            self.scroll_to(y=self.scroll_y + added, animate=False, immediate=True)
            self._loading_earlier = False

        if keep_place:
            self.call_after_refresh(stay_put)
        else:
            self._loading_earlier = False
