"""The model's answer as markdown, re-rendered a few times a second while it streams.

One Static with a Rich Markdown renderable, not Textual's Markdown widget: that builds a widget per
block, and appending answers to a long transcript costs about four times as much with it.
"""

from __future__ import annotations

from rich.markdown import Markdown
from textual.timer import Timer
from textual.widgets import Static

from keel.tui.transcript import AssistantEntry
from keel.tui.widgets.layout_sized import virtual_size_from_layout

FLUSH_SECONDS = 1 / 15  # deltas arrive per token; re-rendering markdown that often only burns CPU


class AssistantBlock(Static):
    virtual_size = virtual_size_from_layout()

    def __init__(self, entry: AssistantEntry) -> None:
        super().__init__(Markdown(entry.text), classes="-streaming" if entry.streaming else "")
        self.text = entry.text
        self._flush_timer: Timer | None = None

    def stream(self, fragment: str) -> None:
        self.text += fragment
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(FLUSH_SECONDS, self._flush)

    def _flush(self) -> None:
        self._flush_timer = None
        self.update(Markdown(self.text))

    def show_entry(self, entry: AssistantEntry) -> None:
        """The final text replaces whatever streamed (they match unless the stream was cut short)."""
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        self.set_class(entry.streaming, "-streaming")
        self.text = entry.text
        self.update(Markdown(entry.text))
