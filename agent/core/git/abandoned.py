"""Worktrees and branches that killed keel runs left behind, removed by the next run: a worktree no live
process holds (agent/core/git/claims.py) goes, its uncommitted work committed on its branch first; a branch
goes only when it holds no commit of its own beyond keel's bookkeeping."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from keel.agent.core.git.claims import Record, left_behind, records
from keel.agent.core.git.lock import file_lock
from keel.agent.core.git.worktrees import (
    BRANCH_PREFIX,
    LOCK_FILE,
    WorkspaceError,
    Worktree,
    _commit_all,
    _common_dir,
    _git,
    repo_top,
)
from keel.prompts import plural


@dataclass
class Cleanup:
    """What was left behind in one repository, and what became of it (branch names)."""

    repo: Path
    removed_worktrees: list[str] = field(default_factory=list)
    deleted_branches: list[str] = field(default_factory=list)
    kept_branches: list[str] = field(default_factory=list)  # a removed worktree's branch with work
    # folders left as they were: their changes could not be committed, or they are not the worktree
    unsaved: list[str] = field(default_factory=list)

    def describe(self) -> list[str]:
        """One line per kind of thing done, for the user: nothing when nothing was left behind."""
        lines = []
        if self.removed_worktrees:
            lines.append(
                f"removed {plural(len(self.removed_worktrees), 'worktree')} that runs which were killed "
                f"left in {self.repo}: {_names(self.removed_worktrees)}"
            )
        if self.deleted_branches:
            lines.append(
                f"deleted {plural(len(self.deleted_branches), 'branch')} without work on them: "
                f"{_names(self.deleted_branches)}"
            )
        if self.kept_branches:
            lines.append(
                f"kept {plural(len(self.kept_branches), 'branch')} with work on them "
                f"(any uncommitted changes committed on them): {_names(self.kept_branches)}"
            )
        if self.unsaved:
            lines.append(
                f"left {plural(len(self.unsaved), 'folder')} of worktrees as they were, since their "
                f"changes could not be committed (or they are not worktrees): {_names(self.unsaved)}"
            )
        return lines


def _names(names: list[str], shown: int = 5) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _is_its_worktree(record: Record) -> bool:
    """Whether the folder git's record names is that worktree (its `.git` file points back at the record):
    only then is it removed, whatever the record was changed to say."""
    try:
        pointer = (record.path / ".git").read_text(encoding="utf-8").strip()
    except OSError:
        return False
    if not pointer.startswith("gitdir:"):
        return False
    return (
        record.path / pointer.removeprefix("gitdir:").strip()
    ).resolve() == record.admin.resolve()


def _without_work(repo: Path, ref: str, pattern: str, bookkeeping: tuple[str, ...]) -> bool:
    """Whether the commits only `ref` has (none of the other branches, tags or HEADs) are all keel's own."""
    subjects = _git(repo, "log", "--format=%s", ref, "--not", f"--exclude={pattern}", "--all")
    return all(subject.startswith(bookkeeping) for subject in subjects.splitlines())


def remove_abandoned(
    repo: Path, name_prefix: str, save_message: str, bookkeeping: tuple[str, ...] = ()
) -> Cleanup:
    """Remove the worktrees on branches `keel/<name_prefix>…` that no live process works in (their
    uncommitted changes committed first, as `save_message`), then every such branch that no worktree has
    out and that holds nothing but commits whose subjects start with one of `bookkeeping`."""
    repo = repo_top(repo)
    common_dir = _common_dir(repo)
    prefix = f"{BRANCH_PREFIX}{name_prefix}"
    cleanup = Cleanup(repo=repo)
    with file_lock(common_dir / LOCK_FILE):  # no worktree is made or claimed meanwhile
        _git(repo, "worktree", "prune")
        for record in records(common_dir):
            branch = record.branch
            if branch is None or not branch.startswith(prefix) or not left_behind(record):
                continue
            if record.path.exists() and not _is_its_worktree(record):
                cleanup.unsaved.append(str(record.path))
                continue
            if record.path.is_dir() and (record.admin / "index").exists():  # it was checked out
                try:
                    _commit_all(Worktree(repo, record.path, branch, ""), save_message)
                except WorkspaceError:
                    cleanup.unsaved.append(str(record.path))
                    continue
                shutil.rmtree(record.path, ignore_errors=True)
            cleanup.removed_worktrees.append(branch)
        _git(repo, "worktree", "prune")
        checked_out = {record.branch for record in records(common_dir)}
        refs = _git(repo, "for-each-ref", "--format=%(refname)", f"refs/heads/{prefix.rstrip('/')}")
        for ref in refs.split():
            branch = ref.removeprefix("refs/heads/")
            if branch in checked_out or not branch.startswith(prefix):
                continue
            if _without_work(repo, ref, f"refs/heads/{prefix}*", bookkeeping):
                tip = _git(repo, "rev-parse", ref)
                _git(repo, "update-ref", "-d", ref, tip)  # only if it still points there
                cleanup.deleted_branches.append(branch)
            elif branch in cleanup.removed_worktrees:
                cleanup.kept_branches.append(branch)
    return cleanup
