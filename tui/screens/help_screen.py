"""/help: the slash commands and the keys."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from keel.tui.commands import command_help

KEYS = [
    ("Enter", "send the prompt (it waits if the agent is busy)"),
    ("Esc", "interrupt the running turn"),
    ("↑ / ↓", "prompt history"),
    ("PgUp / PgDn", "scroll the transcript (its scrollbar shows while you read above the end)"),
    ("Ctrl+N", "new agent"),
    ("F2", "sessions side by side (again, or Esc, to go back; Enter opens a column)"),
    ("Ctrl+PgUp / Ctrl+PgDn", "previous / next session"),
    ("Tab", "move between the session list, transcript and prompt"),
    ("Enter on a tool", "expand or collapse it"),
    (
        "an image path",
        (
            "a PNG, JPEG, GIF or WebP file named in the prompt (typed, pasted or dropped) is "
            "sent with it as an image, to models that take images"
        ),
    ),
    ("Ctrl+Q", "quit (running agents are stopped)"),
]


def help_table() -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold")
    table.add_column()
    for item in command_help():
        if item.listed:
            table.add_row(item.usage, item.description)
    table.add_row("", "")
    for key, description in KEYS:
        table.add_row(key, description)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,enter,f1", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static("keel — commands and keys", id="help-title")
            yield Static(help_table())
            yield Static("Esc closes", id="help-hint")
