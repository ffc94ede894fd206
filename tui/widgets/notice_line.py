"""A one-line note in the transcript: session started, retries, summaries, errors, how a task ended."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.transcript import NoticeEntry
from tui.widgets.layout_sized import virtual_size_from_layout

_MARKS = {"info": "·", "warning": "!", "error": "✗", "success": "✓"}


class NoticeLine(Static):
    virtual_size = virtual_size_from_layout()

    def __init__(self, entry: NoticeEntry) -> None:
        super().__init__(classes=f"-{entry.level}")
        self.show_entry(entry)

    def show_entry(self, entry: NoticeEntry) -> None:
        self.update(Text(f"{_MARKS[entry.level]} {entry.text}"))
