"""The model's answer as markdown, streamed in as deltas arrive."""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from tui.transcript import AssistantEntry


class AssistantBlock(Markdown):
    def __init__(self, entry: AssistantEntry) -> None:
        super().__init__(entry.text, classes="-streaming" if entry.streaming else "")
        self._stream: MarkdownStream | None = None

    async def stream(self, fragment: str) -> None:
        """Append streamed text; a MarkdownStream batches fragments that come faster than it renders."""
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(fragment)

    async def show_entry(self, entry: AssistantEntry) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()
        self.set_class(entry.streaming, "-streaming")
        if entry.text != self.source:
            await self.update(entry.text)

    async def on_unmount(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
