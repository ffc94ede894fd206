"""/new: start an agent (or N copies on one task), with a model, a name, in this tree or own worktrees."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label

from keel.tui.agents import NewAgentRequest
from keel.tui.commands import CommandError, parse_copies
from keel.tui.widgets.space_checkbox import SpaceCheckbox


class NewSessionDialog(ModalScreen[NewAgentRequest | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("enter", "start", "Start", show=False),  # from the checkbox: Space toggles it
    ]

    def __init__(self, model: str, default_name: str) -> None:
        super().__init__()
        self.model = model
        self.default_name = default_name

    def compose(self) -> ComposeResult:
        with Vertical(id="new-box"):
            yield Label("New agent", id="new-title")
            yield Label("Model")
            yield Input(self.model, placeholder="e.g. openai/gpt-4o-mini", id="new-model")
            yield Label("Name")
            yield Input(placeholder=self.default_name, id="new-name")
            yield Label("First task (optional)")
            yield Input(placeholder="what should it do?", id="new-task")
            with Horizontal(id="new-options"):
                yield SpaceCheckbox("in its own git worktree", id="new-worktree")
                yield Label("copies", id="new-copies-label")
                copies = Input("1", type="integer", id="new-copies")
                copies.tooltip = "more than 1: each copy in its own worktree, all on the first task"
                yield copies
            yield Label("", id="new-error")
            with Horizontal(id="new-buttons"):
                yield Button(Content("Start [Enter]"), id="new-start", variant="primary")
                yield Button(Content("Cancel [Esc]"), id="new-cancel")

    def on_mount(self) -> None:
        self.query_one("#new-task", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._start()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "new-start":
            self._start()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_start(self) -> None:
        self._start()

    def _start(self) -> None:
        worktree, copies_box = self.query("#new-worktree"), self.query("#new-copies")
        task = self.query_one("#new-task", Input).value.strip()
        try:
            copies = parse_copies(copies_box.first(Input).value) if copies_box else 1
            if copies > 1 and not task:
                raise CommandError(f"{copies} copies need a first task: they all start on it")
        except CommandError as exc:
            error = self.query_one("#new-error", Label)
            error.update(str(exc))
            error.display = True
            return
        self.dismiss(
            NewAgentRequest(
                model=self.query_one("#new-model", Input).value.strip() or self.model,
                name=self.query_one("#new-name", Input).value.strip() or self.default_name,
                own_worktree=copies > 1 or (bool(worktree) and worktree.first(Checkbox).value),
                task=task,
                copies=copies,
            )
        )
