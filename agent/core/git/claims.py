"""Which worktrees a live keel process is working in: a flock on a file in the worktree's record in git's
folder, held until keel removes the worktree or the process ends (a killed process drops it at once), so a
later run tells a worktree in use from one a killed run left behind."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from keel.agent.core.git.lock import held, hold

IN_USE_FILE = "keel-in-use"  # flocked while a keel process works in the worktree
KEPT_FILE = "keel-kept"  # left on purpose (--keep-worktrees): never cleaned up as left behind

# worktree path -> its flocked IN_USE_FILE and git's folder of the worktree
_held: dict[Path, tuple[int, Path]] = {}


@dataclass(frozen=True)
class Record:
    """git's record of one linked worktree: its folder in git's `worktrees/`, where it is, what it has out."""

    admin: Path
    path: Path
    head: str  # e.g. "ref: refs/heads/keel/batch/t1-1"

    @property
    def branch(self) -> str | None:
        ref = self.head.removeprefix("ref: ").strip()
        return ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None


def records(common_dir: Path) -> list[Record]:
    """Every linked worktree git records in `common_dir` (read from git's files, not the worktrees')."""
    found = []
    for admin in sorted((common_dir / "worktrees").glob("*/")):
        try:
            gitdir = (admin / "gitdir").read_text(encoding="utf-8").strip()
            head = (admin / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        found.append(Record(admin=admin, path=(admin / gitdir).parent.resolve(), head=head))
    return found


def claim(common_dir: Path, path: Path) -> None:
    """Mark the new worktree at `path` in use by this process (call under the worktrees lock)."""
    record = next((r for r in records(common_dir) if r.path == path.resolve()), None)
    if record is None:
        return
    fd = hold(record.admin / IN_USE_FILE)
    if fd is not None:
        _held[path] = (fd, record.admin)


def release(path: Path, keep: bool = False) -> None:
    """This process no longer works in the worktree at `path`; `keep`: it stays on disk on purpose."""
    fd, admin = _held.pop(path, (None, None))
    if keep and admin is not None:
        (admin / KEPT_FILE).write_text("kept by keel\n", encoding="utf-8")
    if fd is not None:
        os.close(fd)


def left_behind(record: Record) -> bool:
    """A worktree no live process works in and nobody kept: what a killed keel left (or a keel from before
    these marks, long finished)."""
    return not (record.admin / KEPT_FILE).exists() and not held(record.admin / IN_USE_FILE)
