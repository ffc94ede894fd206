"""Undo: put a workspace back to a checkpoint (by id, else before its last turn that changed it), undoably.

`keel undo` and the UI's /undo both plan and restore here; each only says it its own way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from keel.agent.git.checkpoints import Checkpoint, CheckpointError, CheckpointStore, FileChange


@dataclass(frozen=True)
class UndoPlan:
    """What restoring would do: put back `target` (None: nothing to undo), changing `changes`."""

    store: CheckpointStore
    target: Checkpoint | None
    changes: list[FileChange]

    def restore(self) -> Checkpoint:
        """Snapshot the workspace as it is (the checkpoint that takes the undo back), then restore the target."""
        if self.target is None:
            raise CheckpointError("nothing to undo: the workspace matches every turn checkpoint")
        before = self.store.snapshot(f"before undo to {self.target.short_id}", kind="undo")
        try:
            self.store.restore(self.target)
        except CheckpointError as exc:
            raise CheckpointError(
                f"{exc}; the state before the undo is checkpoint {before.short_id}"
            ) from None
        return before


def plan_undo(workspace: Path, checkpoint: str = "") -> UndoPlan:
    """The plan to restore checkpoint `checkpoint` (an id prefix), else the newest turn checkpoint that
    differs from the workspace; CheckpointError when the id matches none or several."""
    store = CheckpointStore(workspace)
    target = store.find(checkpoint) if checkpoint else store.last_turn()
    return UndoPlan(store, target, store.changes(target) if target is not None else [])
