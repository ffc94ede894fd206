"""/undo [ID]: put a workspace back as it was before its last turn (or at checkpoint ID), like `keel undo --yes`."""

from __future__ import annotations

from pathlib import Path

from keel.prompts import plural


def undo_last_turn(workspace: Path, checkpoint: str = "") -> str:
    """Restore checkpoint `checkpoint` (an id prefix), else the newest turn checkpoint that differs from
    the workspace; itself undoable. Says what happened; CheckpointError when the id matches none."""
    from keel.agent.api import plan_undo

    plan = plan_undo(workspace, checkpoint)
    if plan.target is None:
        return "nothing to undo: the workspace matches every turn checkpoint"
    if not plan.changes:
        return f"the workspace already matches checkpoint {plan.target.short_id}; nothing changed"
    before = plan.restore()
    changes = plan.changes
    files = ", ".join(change.path for change in changes[:5]) + (" …" if len(changes) > 5 else "")
    where = f"checkpoint {plan.target.short_id}" if checkpoint else "before that turn"
    return (
        f"restored {plural(len(changes), 'file')} to {where} ({files}); "
        f"to take it back: /undo {before.short_id} (or keel undo {before.short_id})"
    )
