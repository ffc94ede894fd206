"""Sessions side by side, one column each, all live; Enter (or a click on a header) opens one, Esc returns."""

from __future__ import annotations

import math
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid
from textual.screen import Screen
from textual.widgets import Static

from keel.tui.agents import AgentHandle
from keel.tui.transcript import Change
from keel.tui.widgets.side_column import SideColumn

MAX_ACROSS = 4  # columns in a row; more sessions wrap onto further rows
HINT = "←/→ column · ↑/↓ scroll · Enter or a click on a header opens it · Esc or F2 back"


class SideBySideScreen(Screen[AgentHandle | None]):
    """Dismissed with the session to open in the main view, or None to go back to the one shown before."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f2", "back", "Back"),
        Binding("enter", "open", "Open session"),
        Binding("left", "move(-1)", "Previous column", priority=True, show=False),
        Binding("right", "move(1)", "Next column", priority=True, show=False),
    ]

    def __init__(self, handles: list[AgentHandle], title: str) -> None:
        super().__init__()
        self.handles = handles
        self.title_text = title
        self.columns = {handle: SideColumn(handle) for handle in handles}
        self._dismissed = False

    def compose(self) -> ComposeResult:
        yield Static(Text(self.title_text, "bold"), id="side-title")
        with Grid(id="side-columns"):
            yield from self.columns.values()
        yield Static(HINT, id="side-hint")

    def on_mount(self) -> None:
        grid = self.query_one("#side-columns", Grid)
        grid.styles.grid_size_columns = min(len(self.handles), MAX_ACROSS)
        grid.styles.grid_size_rows = math.ceil(len(self.handles) / MAX_ACROSS)
        if self.handles:
            self.columns[self.handles[0]].view.focus()

    async def apply(self, handle: AgentHandle, changes: list[Change]) -> None:
        column = self.columns.get(handle)
        if column is not None and not self._dismissed:
            await column.apply(changes)

    def focused_column(self) -> SideColumn | None:
        for column in self.columns.values():
            if column.has_focus_within:
                return column
        return None

    def action_move(self, step: int) -> None:
        column = self.focused_column()
        position = self.handles.index(column.handle) if column is not None else -step
        target = self.handles[(position + step) % len(self.handles)]
        self.set_focus(self.columns[target].view)  # now, not later: a second key must see this one

    def action_open(self) -> None:
        column = self.focused_column()
        self._close(column.handle if column is not None else None)

    def action_back(self) -> None:
        self._close(None)

    def on_side_column_open(self, message: SideColumn.Open) -> None:
        self._close(message.handle)

    def _close(self, handle: AgentHandle | None) -> None:
        if not self._dismissed:
            self._dismissed = True
            self.dismiss(handle)
