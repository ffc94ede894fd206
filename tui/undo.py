"""/undo: put a workspace back as it was before its last turn, like `keel undo --yes` (itself undoable)."""

from __future__ import annotations

from pathlib import Path


def undo_last_turn(workspace: Path) -> str:
    """Restore the newest turn checkpoint that differs from the workspace; says what happened."""
    from agent.checkpoints import CheckpointStore

    store = CheckpointStore(workspace)
    current = store.current_tree()
    target = next((c for c in store.list() if c.kind != "undo" and c.tree != current), None)
    if target is None:
        return "nothing to undo: the workspace matches every turn checkpoint"
    before = store.snapshot(f"before undo to {target.short_id}", kind="undo")
    changes = store.restore(target)
    files = ", ".join(change.path for change in changes[:5]) + (" …" if len(changes) > 5 else "")
    return (
        f"restored {len(changes)} file(s) to before that turn ({files}); "
        f"to take it back: keel undo {before.short_id}"
    )
