"""The plan a session ended with in plan mode: the person accepts it as it is or edited, or keeps planning."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea


class PlanReview(ModalScreen[str | None]):
    """Dismissed with the plan to carry out (edited or not), or None to stay in plan mode."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "accept", "Accept"),
        Binding("escape", "keep_planning", "Keep planning"),
    ]

    def __init__(self, plan: str, session_name: str) -> None:
        super().__init__()
        self.plan = plan
        self.session_name = session_name

    def compose(self) -> ComposeResult:
        with Vertical(id="plan-box"):
            yield Static(
                Text.assemble((f"{self.session_name} proposes this plan", "bold")),
                id="plan-title",
            )
            yield TextArea(self.plan, id="plan-text", soft_wrap=True)
            yield Static(
                Text(
                    "Edit it here if you like. Accept: plan mode ends and the same session carries "
                    "out the plan (as edited) with every tool. Keep planning: answer it with a prompt."
                ),
                id="plan-hint",
            )
            with Horizontal(id="plan-buttons"):
                yield Button(Content("Accept [Ctrl+S]"), id="accept", variant="primary")
                yield Button(Content("Keep planning [Esc]"), id="keep")

    def on_mount(self) -> None:
        self.query_one("#accept", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "accept":
            self.action_accept()
        else:
            self.action_keep_planning()

    def action_accept(self) -> None:
        text = self.query_one(TextArea).text.strip()
        self.dismiss(text or self.plan)

    def action_keep_planning(self) -> None:
        self.dismiss(None)
