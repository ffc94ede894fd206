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
    """A ToolContext's stamps and changed files at one moment."""

    stamps: dict[Path, FileStamp]
    changed: frozenset[Path]


def snapshot(ctx: ToolContext) -> Seen:
    return Seen(dict(ctx.read_stamps), frozenset(ctx.changed_files))


def seen_since(ctx: ToolContext, before: Seen) -> list[FileSeen]:
    """The files whose stamp the context gained, changed or dropped since `before`, and those newly changed."""
    paths = (
        {path for path, _ in ctx.read_stamps.items() - before.stamps.items()}
        | (before.stamps.keys() - ctx.read_stamps.keys())
        | (ctx.changed_files - before.changed)
    )
    seen = []
    for path in sorted(paths):
        stamp = ctx.read_stamps.get(path)
        seen.append(
            FileSeen(
                path=str(path),
                mtime_ns=None if stamp is None else stamp.mtime_ns,
                size=0 if stamp is None else stamp.size,
                changed=path in ctx.changed_files and path not in before.changed,
            )
        )
    return seen


def recall(ctx: ToolContext, state: SessionState) -> None:
    """Give a resumed session's tools what its log says the agent had seen (keel.agent.core.fold keeps it)."""
    ctx.read_stamps.update(
        {Path(path): FileStamp(*stamp) for path, stamp in state.read_stamps.items()}
    )
    ctx.changed_files.update(Path(path) for path in state.changed_files)
