"""The sessions side by side: pick one with the arrows and Enter, or a click, to watch its transcript."""

from __future__ import annotations

from typing import Any

from textual.message import Message
from textual.widgets import ListView

from keel.tui.agents import AgentHandle
from keel.tui.widgets.session_row import SessionRow


class SessionList(ListView):
    """One row per session; the rows of the sessions there at launch come composed with the list."""

    def __init__(self, handles: list[AgentHandle], **kwargs: Any) -> None:
        super().__init__(*(SessionRow(handle) for handle in handles), **kwargs)

    class Picked(Message):
        def __init__(self, handle: AgentHandle) -> None:
            super().__init__()
            self.handle = handle

    def rows(self) -> list[SessionRow]:
        return list(self.query(SessionRow))

    async def add_handle(self, handle: AgentHandle) -> None:
        await self.append(SessionRow(handle))

    def refresh_handle(self, handle: AgentHandle) -> None:
        for row in self.rows():
            if row.handle is handle:
                row.refresh_row()

    def highlight_handle(self, handle: AgentHandle) -> None:
        for position, row in enumerate(self.rows()):
            if row.handle is handle:
                self.index = position

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        event.stop()
        if isinstance(event.item, SessionRow):
            self.post_message(self.Picked(event.item.handle))
