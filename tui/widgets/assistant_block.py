"""The model's answer as markdown, streamed in as deltas arrive (coalesced to a few repaints a second)."""

from __future__ import annotations

from textual.timer import Timer
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from tui.transcript import AssistantEntry

FLUSH_SECONDS = 1 / 15  # deltas arrive per token; re-rendering markdown that often only burns CPU


class AssistantBlock(Markdown):
    def __init__(self, entry: AssistantEntry) -> None:
        super().__init__(entry.text, classes="-streaming" if entry.streaming else "")
        self._stream: MarkdownStream | None = None
        self._pending: list[str] = []
        self._flush_timer: Timer | None = None

    async def stream(self, fragment: str) -> None:
        self._pending.append(fragment)
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(FLUSH_SECONDS, self._flush)

    async def _flush(self) -> None:
        self._flush_timer = None
        text, self._pending = "".join(self._pending), []
        if text:
            if self._stream is None:
                self._stream = Markdown.get_stream(self)
            await self._stream.write(text)

    async def show_entry(self, entry: AssistantEntry) -> None:
        """The final text replaces whatever streamed (they match unless the stream was cut short)."""
        await self._stop_stream()
        self.set_class(entry.streaming, "-streaming")
        if entry.text != self.source:
            await self.update(entry.text)

    async def _stop_stream(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        self._pending = []
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    async def on_unmount(self) -> None:
        await self._stop_stream()
