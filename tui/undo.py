"""/undo [ID]: put a workspace back as it was before its last turn (or at checkpoint ID), like `keel undo --yes`.

A running session does it itself (the Undo op), so that its model is told; these say what happened.
"""

from __future__ import annotations

from pathlib import Path

from keel.prompts import plural


def undo_note(restored: str, undo_id: str, files: list[str], named: bool) -> str:
    """What an undo did, for the transcript: `restored` is the checkpoint put back ("" for none)."""
    if not restored:
        return "nothing to undo: the workspace matches every turn checkpoint"
    if not files:
        return f"the workspace already matches checkpoint {restored}; nothing changed"
    shown = ", ".join(files[:5]) + (" …" if len(files) > 5 else "")
    where = f"checkpoint {restored}" if named else "before that turn"
    return (
        f"restored {plural(len(files), 'file')} to {where} ({shown}); "
        f"to take it back: /undo {undo_id} (or keel undo {undo_id})"
    )


def undo_last_turn(workspace: Path, checkpoint: str = "") -> str:
    """For an agent whose session has not started: restore checkpoint `checkpoint` (an id prefix), else the
    newest turn checkpoint that differs from the workspace; itself undoable. Says what happened;
    CheckpointError when the id matches none."""
    from keel.agent.core.api import plan_undo

    plan = plan_undo(workspace, checkpoint)
    if plan.target is None or not plan.changes:
        restored = plan.target.short_id if plan.target else ""
        return undo_note(restored, "", [], bool(checkpoint))
    before = plan.restore()
    files = [change.path for change in plan.changes]
    return undo_note(plan.target.short_id, before.short_id, files, bool(checkpoint))
