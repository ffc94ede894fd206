"""Undo: put a workspace back to a checkpoint (by id, else before its last turn that changed it), undoably.

`keel undo` and the UI's /undo both plan and restore here; each only says it its own way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from keel.agent.core.git.checkpoints import Checkpoint, CheckpointError, CheckpointStore, FileChange

if TYPE_CHECKING:
    from keel.agent.core.protocol import UndoApplied


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


def undo_in_session(workspace: Path, checkpoint: str = "") -> UndoApplied:
    """A session's /undo: restore as `plan_undo(workspace, checkpoint)` plans, and the event that records
    it (empty `restored`: nothing to undo; no files: the workspace already matched). CheckpointError when
    the id matches none or several, or the restore fails."""
    from keel.agent.core.protocol import UndoApplied

    plan = plan_undo(workspace, checkpoint)
    if plan.target is None:
        return UndoApplied(named=bool(checkpoint))
    restored = plan.target.short_id
    if not plan.changes:
        return UndoApplied(restored=restored, named=bool(checkpoint))
    return undo_event(plan, plan.restore(), bool(checkpoint))


def undo_event(plan: UndoPlan, before: Checkpoint, named: bool) -> UndoApplied:
    """The undo.applied that records a restore done by `plan` (`before`: the checkpoint that takes it back)."""
    from keel.agent.core.protocol import RestoredFile, UndoApplied

    files = [RestoredFile(action=change.action, path=change.path) for change in plan.changes]
    restored = plan.target.short_id if plan.target else ""
    return UndoApplied(restored=restored, undo_id=before.short_id, files=files, named=named)


def record_in_its_session(event: UndoApplied, session_id: str) -> bool:
    """`keel undo` outside any session: the session whose turn it undid gets the event in its log, so that
    resumed, its model is told. Only when that session is between tasks (its log ends with its task's end):
    a note in the middle of a turn would split a tool call from its result. Whether it was recorded."""
    from keel.agent.core.store import SessionLog, find_session, read_events

    log = find_session(session_id) if session_id else None
    if log is None:
        return False
    events = read_events(log)
    if not events or events[-1].type not in ("session.finished", "undo.applied"):
        return False
    session_log = SessionLog(log)
    try:
        session_log.append(event)
    finally:
        session_log.close()
    return True


def plan_undo(workspace: Path, checkpoint: str = "") -> UndoPlan:
    """The plan to restore checkpoint `checkpoint` (an id prefix), else the newest turn checkpoint that
    differs from the workspace; CheckpointError when the id matches none or several."""
    store = CheckpointStore(workspace)
    target = store.find(checkpoint) if checkpoint else store.last_turn()
    return UndoPlan(store, target, store.changes(target) if target is not None else [])
