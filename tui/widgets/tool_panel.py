"""One tool call, collapsible: a title line with its state, then arguments, output and any diff."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Collapsible

from keel.tui import format as fmt
from keel.tui.transcript import ToolEntry
from keel.tui.widgets.diff_view import DiffView
from keel.tui.widgets.tool_details import ToolDetails

_ICONS = {
    "running": "⋯",
    "approval": "?",
    "ok": "✓",
    "unchanged": "=",
    "failed": "✗",
    "denied": "⊘",
}
_STATES = ("running", "approval", "ok", "unchanged", "failed", "denied")


def panel_title(entry: ToolEntry) -> Content:
    parts: list[str | tuple[str, str]] = [(f"{_ICONS[entry.state]} ", "bold"), (entry.name, "bold")]
    summary = fmt.argument_summary(entry.name, entry.arguments)
    if summary:
        parts.append(f"  {summary}")
    if entry.state == "approval":
        parts.append(("  waiting for approval", "italic"))
    elif entry.state == "denied":
        parts.append(("  denied", "italic"))
    elif entry.state == "unchanged":
        parts.append(("  nothing changed", "italic"))
    elif entry.state in ("ok", "failed"):
        parts.append((f"  {fmt.duration(entry.duration_ms)}", "dim"))
    return Content.assemble(*parts)


class ToolPanel(Collapsible):
    """Enter or a click toggles it."""

    def __init__(self, entry: ToolEntry) -> None:
        self._details = ToolDetails(entry)
        self._diff = DiffView(entry.diff) if entry.diff else None
        children = [self._diff, self._details] if self._diff else [self._details]
        super().__init__(*children, title=panel_title(entry), collapsed=not self._opens(entry))  # type: ignore[arg-type]
        self._set_state(entry)

    @staticmethod
    def _opens(entry: ToolEntry) -> bool:
        """Diffs, command output and pending approvals show open; reads and searches stay one line."""
        return bool(entry.diff) or entry.state == "approval" or entry.name == "run_command"

    def _set_state(self, entry: ToolEntry) -> None:
        for state in _STATES:
            self.set_class(entry.state == state, f"-{state}")

    async def show_entry(self, entry: ToolEntry) -> None:
        self.title = panel_title(entry)  # type: ignore[assignment]
        self._set_state(entry)
        self._details.show_entry(entry)
        if entry.diff and self._diff is None:
            self._diff = DiffView(entry.diff)
            await self.query_one(Collapsible.Contents).mount(self._diff, before=0)
        elif entry.diff and self._diff is not None:
            self._diff.show_diff(entry.diff)
        if self._opens(entry):
            self.collapsed = False
