"""What the agent has seen of files, as events: the tools note reads and writes in their ToolContext, the loop
turns what a call noted into `seen` on its tool.finished, the fold keeps it, and a resume gives it back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from keel.agent.core.protocol import FileSeen
from keel.agent.core.state import SessionState
from keel.tools.base import FileStamp, ToolContext


@dataclass(frozen=True)
class Seen:
    """Where a ToolContext's journal of seen files stood at one moment."""

    mark: int


def snapshot(ctx: ToolContext) -> Seen:
    return Seen(len(ctx.seen_journal))


def seen_since(ctx: ToolContext, before: Seen) -> list[FileSeen]:
    """The files whose stamp the context gained, changed or dropped since `before`, and those newly changed."""
    then: dict[Path, tuple[FileStamp | None, bool]] = {}
    for path, stamp, changed in ctx.seen_journal[before.mark :]:
        then.setdefault(
            path, (stamp, changed)
        )  # the first note since `before` has it as it was then
    seen = []
    for path in sorted(then):
        old_stamp, was_changed = then[path]
        stamp = ctx.read_stamps.get(path)
        changed = path in ctx.changed_files and not was_changed
        if stamp == old_stamp and not changed:
            continue
        seen.append(
            FileSeen(
                path=str(path),
                mtime_ns=None if stamp is None else stamp.mtime_ns,
                size=0 if stamp is None else stamp.size,
                changed=changed,
            )
        )
    return seen


def recall(ctx: ToolContext, state: SessionState) -> None:
    """Give a resumed session's tools what its log says the agent had seen (keel.agent.core.fold keeps it)."""
    ctx.read_stamps.update(
        {Path(path): FileStamp(*stamp) for path, stamp in state.read_stamps.items()}
    )
    ctx.changed_files.update(Path(path) for path in state.changed_files)
