"""A prompt in the transcript: the person's, or keel's correction to the model."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.transcript import UserEntry
from tui.widgets.layout_sized import virtual_size_from_layout


class UserBlock(Static):
    virtual_size = virtual_size_from_layout()

    def __init__(self, entry: UserEntry) -> None:
        super().__init__(classes=f"-{entry.origin}")
        self.show_entry(entry)

    def show_entry(self, entry: UserEntry) -> None:
        prefix = "› " if entry.origin == "user" else "keel → model: "
        self.update(Text.assemble((prefix, "bold"), entry.text))
