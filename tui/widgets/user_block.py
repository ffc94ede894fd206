"""A prompt in the transcript: the person's, or keel's correction to the model."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from keel.tui.transcript import UserEntry
from keel.tui.widgets.layout_sized import virtual_size_from_layout


def prompt_text(entry: UserEntry) -> Text:
    prefix = "› " if entry.origin == "user" else "keel → model: "
    return Text.assemble((prefix, "bold"), entry.text)


class UserBlock(Static):
    virtual_size = virtual_size_from_layout()

    def __init__(self, entry: UserEntry) -> None:
        # content given here, not by update(): that would ask for a second layout once mounted
        super().__init__(prompt_text(entry), classes=f"-{entry.origin}")

    def show_entry(self, entry: UserEntry) -> None:
        self.update(prompt_text(entry))
