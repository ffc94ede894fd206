"""/undo [ID]: put a workspace back as it was before its last turn (or at checkpoint ID), like `keel undo --yes`."""

from __future__ import annotations

from pathlib import Path

from keel.prompts import plural


def undo_last_turn(workspace: Path, checkpoint: str = "") -> str:
    """Restore checkpoint `checkpoint` (an id prefix), else the newest turn checkpoint that differs from
    the workspace; itself undoable. Says what happened; CheckpointError when the id matches none."""
    from keel.agent.git.checkpoints import CheckpointStore

    store = CheckpointStore(workspace)
    target = store.find(checkpoint) if checkpoint else store.last_turn()
    if target is None:
        return "nothing to undo: the workspace matches every turn checkpoint"
    if not store.changes(target):
        return f"the workspace already matches checkpoint {target.short_id}; nothing changed"
    before = store.snapshot(f"before undo to {target.short_id}", kind="undo")
    changes = store.restore(target)
    files = ", ".join(change.path for change in changes[:5]) + (" …" if len(changes) > 5 else "")
    where = f"checkpoint {target.short_id}" if checkpoint else "before that turn"
    return (
        f"restored {plural(len(changes), 'file')} to {where} ({files}); "
        f"to take it back: /undo {before.short_id} (or keel undo {before.short_id})"
    )
