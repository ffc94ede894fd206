"""The public surface of keel's git services: worktrees, the one git runner, checkpoints and undo."""

from __future__ import annotations

from keel.agent.git.abandoned import remove_abandoned
from keel.agent.git.checkpoints import Checkpoint, CheckpointError, CheckpointStore, FileChange
from keel.agent.git.runner import NEUTRAL_CONFIG, Git, GitError
from keel.agent.git.undo import record_in_its_session, undo_event
from keel.agent.git.worktrees import (
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
