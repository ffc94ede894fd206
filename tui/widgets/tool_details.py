"""The inside of a tool panel: the call's arguments and its (clipped) output."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from keel.tui import format as fmt
from keel.tui.transcript import ToolEntry

MAX_OUTPUT_LINES = 40


def render_details(entry: ToolEntry) -> Text:
    """Arguments then output; for an edit with a diff the diff says it all, so only the output."""
    text = Text()
    if not entry.diff:
        for line in fmt.argument_lines(entry.arguments):
            text.append(line + "\n", "dim")
    if entry.state == "running":
        text.append("running…", "italic")
    elif entry.state == "approval":
        text.append("waiting for your approval", "italic")
    else:
        output, hidden = fmt.clip_lines(entry.output, MAX_OUTPUT_LINES)
        text.append(output or "(no output)", "red" if entry.state == "failed" else "")
        if hidden:
            text.append(f"\n… {fmt.plural(hidden, 'more line')}", "dim")
    text.rstrip()
    return text


class ToolDetails(Static):
    def __init__(self, entry: ToolEntry) -> None:
        super().__init__(render_details(entry))

    def show_entry(self, entry: ToolEntry) -> None:
        self.update(render_details(entry))
