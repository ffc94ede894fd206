"""/help: the slash commands (keel's and the workspace's Markdown ones) and the keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from keel.tui.commands import command_help, feature_help, markdown_help, skill_help

COMMAND_FOLDERS = "Markdown files in .keel/commands, .claude/commands, ~/.config/keel/commands"
SKILL_FOLDERS = ".keel/skills, .claude/skills, ~/.config/keel/skills"
KEYS = [
    ("Enter", "send the prompt (it waits if the agent is busy)"),
    ("Esc", "interrupt the running turn"),
    ("↑ / ↓", "prompt history"),
    ("PgUp / PgDn", "scroll the transcript (its scrollbar shows while you read above the end)"),
    ("Ctrl+N", "new agent"),
    ("F2", "sessions side by side (again, or Esc, to go back; Enter opens a column)"),
    ("F4", "plan mode on or off (only the read tools run; the agent ends with a plan)"),
    ("Ctrl+S / Esc in a plan", "accept it (as edited) / keep planning"),
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


def help_table(root: Path | None = None) -> Table:
    """keel's commands, the Markdown commands and skills of `root` and the user, the keys."""
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold")
    table.add_column()
    for item in command_help():
        if item.listed:
            table.add_row(item.usage, item.description)
    custom = markdown_help(root) if root else []
    if custom:
        table.add_row("", "")
        table.add_row("", f"your commands ({COMMAND_FOLDERS}):")
        for item in custom:  # the files' text as it is: `[file]` is no markup
            table.add_row(Text(item.usage), Text(item.description))
    skills = skill_help(root) if root else []
    if skills:
        table.add_row("", "")
        table.add_row("", f"skills the model loads when a task needs one ({SKILL_FOLDERS}):")
        for item in skills:
            table.add_row(Text(item.usage), Text(item.description))
    table.add_row("", "")
    for key, description in KEYS:
        table.add_row(key, description)
    table.add_row("", "")
    for item in feature_help():
        table.add_row(item.usage, item.description)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,enter,f1", "dismiss", "Close")]

    def __init__(self, root: Path | None = None, **kwargs: Any) -> None:
        """`root`: the workspace whose Markdown commands are listed."""
        super().__init__(**kwargs)
        self.root = root

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static("keel — commands and keys", id="help-title")
            yield Static(help_table(self.root))
            yield Static("Esc closes", id="help-hint")
