"""The prompt box: Enter sends, Up and Down walk the history, slash commands complete with →."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.suggester import Suggester
from textual.widgets import Input

from keel.tui.history import InputHistory


class CommandSuggester(Suggester):
    """Completes slash commands, keel's and the Markdown ones of `root`; their list (keel.tui.commands)
    loads when a `/` is first typed."""

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(case_sensitive=False)
        self._names: list[str] | None = None
        self.root = root

    async def get_suggestion(self, value: str) -> str | None:
        if not value.startswith("/"):
            return None
        if self._names is None:
            from keel.agent.core.api import markdown_commands
            from keel.tui.commands import command_names

            self._names = command_names(markdown_commands(self.root) if self.root else ())
        return next((name for name in self._names if name.casefold().startswith(value)), None)


class PromptInput(Input):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history_previous", "Previous prompt", show=False),
        Binding("down", "history_next", "Next prompt", show=False),
    ]

    def __init__(self, root: Path | None = None, **kwargs: Any) -> None:
        """`root`: the workspace whose Markdown commands complete too."""
        # coming back to the box keeps the draft and the cursor: a selected draft is lost to the next key
        super().__init__(suggester=CommandSuggester(root), select_on_focus=False, **kwargs)
        self.history = InputHistory()

    def remember(self, text: str) -> None:
        self.history.add(text)

    def action_history_previous(self) -> None:
        self._show(self.history.previous(self.value))

    def action_history_next(self) -> None:
        self._show(self.history.next())

    def _show(self, text: str | None) -> None:
        if text is not None:
            self.value = text
            self.cursor_position = len(text)
