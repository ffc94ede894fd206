"""A one-line note in the transcript: session started, retries, summaries, errors, how a task ended."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from keel.tui.transcript import NoticeEntry
from keel.tui.widgets.layout_sized import virtual_size_from_layout

_MARKS = {"info": "·", "warning": "!", "error": "✗", "success": "✓"}


def notice_text(entry: NoticeEntry) -> Text:
    return Text(f"{_MARKS[entry.level]} {entry.text}")


class NoticeLine(Static):
    virtual_size = virtual_size_from_layout()

    def __init__(self, entry: NoticeEntry) -> None:
        # content given here, not by update(): that would ask for a second layout once mounted
        super().__init__(notice_text(entry), classes=f"-{entry.level}")

    def show_entry(self, entry: NoticeEntry) -> None:
        self.update(notice_text(entry))
