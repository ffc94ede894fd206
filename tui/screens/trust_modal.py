"""Asks once whether to trust a repository whose `.keel/config.toml` would widen what keel may do.

Until the folder is trusted those keys are ignored (keel.agent.core.config_trust); the answer is recorded in
the user's config (keel.agent.core.trust), never in the repository. `TrustApp` shows the modal on its own
before the main app starts, so the first session's settings already follow the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class TrustModal(ModalScreen[bool]):
    """Trust the folder (its config applies in full) or not (its widening keys stay ignored)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t,y", "decide(True)", "Trust"),
        Binding("n,d,escape", "decide(False)", "Do not trust"),
    ]

    def __init__(self, root: Path, keys: list[str]) -> None:
        super().__init__()
        self.root = root
        self.keys = keys

    def compose(self) -> ComposeResult:
        with Vertical(id="trust-box"):
            yield Static(
                Text.assemble(("Do you trust the files in ", ""), (str(self.root), "bold"), "?"),
                id="trust-title",
            )
            yield Static(
                Text(
                    "Its .keel/config.toml asks for more than keel allows a folder you have not "
                    "trusted:\n  " + ", ".join(self.keys) + "\n\nA trusted repository's config can "
                    "loosen the approval and the sandbox and start programs (MCP servers, commands) "
                    "on your machine. Trust it only if you trust its authors. Not trusting it runs "
                    "keel with those keys ignored; `keel trust` can trust it later."
                ),
                id="trust-details",
            )
            with Horizontal(id="trust-buttons"):
                yield Button(Content("Do not trust [n]"), id="distrust", variant="primary")
                yield Button(Content("Trust this folder [t]"), id="trust", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#distrust", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(event.button.id == "trust")

    def action_decide(self, trust: bool) -> None:
        self.dismiss(trust)


class TrustApp(App[bool]):
    """Only the question, before keel's own app: returns True to trust, False (or None) not to."""

    CSS_PATH = str(Path(__file__).with_name("trust_modal.tcss"))

    def __init__(self, root: Path, keys: list[str]) -> None:
        super().__init__()
        self.root = root
        self.keys = keys

    def on_mount(self) -> None:
        self.push_screen(TrustModal(self.root, self.keys), self.exit)
