"""Asks the person about one tool call: allow once, allow this tool for the session, or deny."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from keel.tui import format as fmt

if TYPE_CHECKING:
    from keel.agent.core.protocol import (
        ApprovalDecision,  # noqa: F401 (ruff misses the base's string)
        ApprovalRequested,
    )


class ApprovalModal(ModalScreen["ApprovalDecision"]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a,y", "decide('allow_once')", "Allow once"),
        Binding("s", "decide('allow_session')", "Allow for session"),
        Binding("d,n,escape", "decide('deny')", "Deny"),
    ]

    def __init__(self, request: ApprovalRequested, session_name: str) -> None:
        super().__init__()
        self.request = request
        self.session_name = session_name

    @property
    def call_id(self) -> str:
        return self.request.call_id

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="approval-box"):
            yield Static(
                Text.assemble((f"{self.session_name} wants to run ", ""), (request.name, "bold")),
                id="approval-title",
            )
            details = "\n".join(fmt.argument_lines(request.arguments)) or "(no arguments)"
            yield Static(Text(details), id="approval-arguments")
            yield Static(Text(request.reason), id="approval-reason")
            with Horizontal(id="approval-buttons"):
                yield Button(Content("Allow once [a]"), id="allow_once", variant="primary")
                yield Button(
                    Content(f"Allow {request.name} for this session [s]"), id="allow_session"
                )
                yield Button(Content("Deny [d]"), id="deny", variant="error")

    def on_mount(self) -> None:
        self.query_one("#allow_once", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(event.button.id or "")

    def action_decide(self, decision: str) -> None:
        match decision:  # a button's id or a binding's argument
            case "allow_once" | "allow_session" | "deny":
                self.dismiss(decision)
