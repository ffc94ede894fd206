"""A unified diff with added and removed lines coloured; long diffs are clipped."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from keel.tui import format as fmt

MAX_DIFF_LINES = 400


def render_diff(diff: str, limit: int = MAX_DIFF_LINES) -> Text:
    text = Text()
    lines = diff.rstrip("\n").splitlines()
    for line in lines[:limit]:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        text.append(line + "\n", style)
    if len(lines) > limit:
        text.append(f"… {fmt.plural(len(lines) - limit, 'more diff line')}\n", "dim")
    text.rstrip()
    return text


class DiffView(Static):
    def __init__(self, diff: str) -> None:
        super().__init__(render_diff(diff))

    def show_diff(self, diff: str) -> None:
        self.update(render_diff(diff))
