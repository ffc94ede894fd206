"""A checkbox that only Space toggles, so Enter in a dialog submits it as it does from the dialog's inputs."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Checkbox


class SpaceCheckbox(Checkbox, inherit_bindings=False):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_button", "Toggle", show=False)
    ]
