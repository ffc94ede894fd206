"""The first line of a windowed transcript: how many entries are not shown; Enter or a click shows more."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static


def marker_text(hidden: int) -> Text:
    return Text(f"▲ {hidden} earlier entries — Enter or click to show more")


class EarlierMarker(Static, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "show_earlier", "Show earlier", show=False)
    ]

    class ShowEarlier(Message):
        """The person asked to see earlier entries."""

    def __init__(self, hidden: int) -> None:
        super().__init__(marker_text(hidden))
        self.hidden = hidden

    def set_hidden(self, hidden: int) -> None:
        self.hidden = hidden
        self.update(marker_text(hidden), layout=False)  # always one line

    def action_show_earlier(self) -> None:
        self.post_message(self.ShowEarlier())

    def on_click(self) -> None:
        self.post_message(self.ShowEarlier())
