"""The public surface of keel's git services: worktrees, the one git runner, checkpoints and undo."""

from __future__ import annotations

from keel.agent.core.git.abandoned import remove_abandoned
from keel.agent.core.git.checkpoints import Checkpoint, CheckpointError, CheckpointStore, FileChange
from keel.agent.core.git.runner import NEUTRAL_CONFIG, Git, GitError
from keel.agent.core.git.undo import record_in_its_session, undo_event
from keel.agent.core.git.worktrees import (
    WorkspaceError,
    Worktree,
    check_writable,
    commit_all,
    create_worktree,
    delete_branch_at,
    keep_worktree,
    remove_worktree,
    repo_top,
    resolve_ref,
    save_changes,
)

__all__ = [
    "NEUTRAL_CONFIG",
    "Checkpoint",
    "CheckpointError",
    "CheckpointStore",
    "FileChange",
    "Git",
    "GitError",
    "WorkspaceError",
    "Worktree",
    "check_writable",
    "commit_all",
    "create_worktree",
    "delete_branch_at",
    "keep_worktree",
    "record_in_its_session",
    "remove_abandoned",
    "remove_worktree",
    "repo_top",
    "resolve_ref",
    "save_changes",
    "undo_event",
]
