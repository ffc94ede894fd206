"""What a killed write leaves behind: the paths a session's log says it set out to write, and their temp files."""

from __future__ import annotations

from collections.abc import Iterable

from keel.agent.core.protocol import AnyEvent, ToolStarted
from keel.tools.base import ToolContext, ToolError
from keel.tools.editing.fileio import remove_leftover_temp_files as remove_temp_files_of
from keel.tools.editing.patch_format import ADD, DELETE, MOVE, UPDATE

WRITING_TOOLS = ("write_file", "edit_file")


def written_paths(events: Iterable[AnyEvent]) -> set[str]:
    """Every path a logged write_file, edit_file or apply_patch call set out to change, as the model wrote it."""
    paths: set[str] = set()
    for event in events:
        if not isinstance(event, ToolStarted):
            continue
        if event.name in WRITING_TOOLS and isinstance(event.arguments.get("path"), str):
            paths.add(event.arguments["path"])
        elif event.name == "apply_patch" and isinstance(event.arguments.get("patch"), str):
            for line in event.arguments["patch"].splitlines():
                for directive in (ADD, DELETE, UPDATE, MOVE):
                    if line.startswith(directive):
                        paths.add(line[len(directive) :].strip())
    return paths


def remove_leftover_temp_files(events: Iterable[AnyEvent], context: ToolContext) -> None:
    """A write killed mid-way (the process died) leaves its temp file beside the target: clean up on resume."""
    for written in written_paths(events):
        try:
            remove_temp_files_of(context.resolve(written))
        except ToolError:  # a path outside the workspace was refused when it was called, too
            continue
