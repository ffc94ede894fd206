"""Git worktrees for agents: each works on its own branch in its own directory, the user's checkout untouched."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
import shutil
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import git

from keel.agent.core.config_files import keel_home
from keel.agent.core.git.claims import claim, release
from keel.agent.core.git.lock import file_lock
from keel.agent.core.git.runner import NEUTRAL_CONFIG, Git, GitError

BRANCH_PREFIX = "keel/"
KEEL_AUTHOR = "keel <keel@localhost>"
LOCK_FILE = "keel-worktrees.lock"


class WorkspaceError(GitError):
    """A worktree could not be created or finished: no repository, a bad ref, a git failure."""


@dataclass(frozen=True)
class Worktree:
    """One agent's checkout: `path` on `branch`, started from commit `base` of the repository `repo`."""

    repo: Path
    path: Path
    branch: str
    base: str
    git_dir: Path | None = (
        None  # its metadata, learned before any agent ran (the .git file may lie later)
    )
    common_dir: Path | None = None

    @property
    def name(self) -> str:
        """The branch without keel's prefix: what the agent working in it is called."""
        return self.branch.removeprefix(BRANCH_PREFIX)


def _runner(cwd: Path) -> Git:
    return Git(cwd, config=NEUTRAL_CONFIG, where=f"in {cwd}", error=WorkspaceError)


def _git(cwd: Path, *args: str) -> str:
    return _runner(cwd).text(*args)


def _in_worktree(worktree: Worktree) -> Git:
    """git in the worktree with the metadata keel recorded, whatever its `.git` file says now."""
    return replace(_runner(worktree.path), git_dir=worktree.git_dir, common_dir=worktree.common_dir)


def repo_top(path: Path) -> Path:
    """The top level of the git working tree holding `path`; WorkspaceError when there is none."""
    try:
        with git.Repo(path, search_parent_directories=True) as repo:
            top = repo.working_tree_dir
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise WorkspaceError(f"{path} is not inside a git repository") from None
    if top is None:
        raise WorkspaceError(f"{path} is a bare git repository; worktrees need a working tree")
    return Path(top).resolve()


def resolve_ref(repo: Path, ref: str | None) -> str:
    """The commit sha `ref` (default HEAD) names in `repo`."""
    name = ref or "HEAD"
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
    except WorkspaceError:
        what = "HEAD (the repository has no commits yet)" if ref is None else f"ref {ref!r}"
        raise WorkspaceError(f"{what} is not a commit in {repo}") from None


@functools.lru_cache(maxsize=256)
def _common_dir(repo: Path) -> Path:
    return Path(repo, _git(repo, "rev-parse", "--git-common-dir")).resolve()


def check_writable(repo: Path) -> None:
    """WorkspaceError unless keel can write to `repo`'s git directory, where git records each worktree and branch."""
    common_dir = _common_dir(repo)
    try:
        with (common_dir / LOCK_FILE).open("a"):
            pass
    except OSError as exc:
        raise WorkspaceError(
            f"cannot write to {common_dir} ({exc.strerror}): keel records each agent's worktree and "
            "branch there; make the repository writable, or work in a writable clone of it"
        ) from None


def default_root(repo: Path) -> Path:
    """Where worktrees of `repo` live by default: under keel's home, outside the user's tree."""
    key = hashlib.sha1(str(_common_dir(repo)).encode()).hexdigest()[:8]
    return keel_home() / "worktrees" / f"{repo.name}-{key}"


# ---------------------------------------------------------------- serialization of git's bookkeeping

_pruned: set[Path] = set()  # repositories whose stale worktree records this process has cleared
_prune_started: dict[
    Path, float
] = {}  # when this process last began `git worktree prune`, per repository
_async_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


@asynccontextmanager
async def _serialized(common_dir: Path) -> AsyncIterator[None]:
    """One worktree add/remove at a time per repository; waiters wait here, not in pool threads."""
    locks = _async_locks.setdefault(asyncio.get_running_loop(), {})
    async with locks.setdefault(common_dir, asyncio.Lock()):
        yield


# ---------------------------------------------------------------- create


def _safe_name(name: str) -> str:
    parts = [re.sub(r"[^A-Za-z0-9._-]+", "-", part).strip(".-") for part in name.split("/")]
    parts = [part.removesuffix(".lock") for part in parts if part]
    return "/".join(parts) or "agent"


def _taken(branch: str, existing: set[str]) -> bool:
    """A branch name git would refuse: it exists, or it is a directory of one, or one is its directory."""
    return branch in existing or any(
        other.startswith(branch + "/") or branch.startswith(other + "/") for other in existing
    )


def _register(repo: Path, name: str, ref: str | None, root: Path | None) -> Worktree:
    """Pick a free branch and path and tell git (under the lock); the files are checked out after."""
    repo = repo_top(repo)
    base = resolve_ref(repo, ref)
    common_dir = _common_dir(repo)
    root = (root or default_root(repo)).resolve()
    stem = _safe_name(name)
    with file_lock(common_dir / LOCK_FILE):
        if common_dir not in _pruned:
            _git(repo, "worktree", "prune")
            _pruned.add(common_dir)
        with git.Repo(
            repo
        ) as handle:  # branch names read from git's files: no process under the lock
            existing = {head.name for head in handle.heads}
        suffix = 1
        while True:
            candidate = stem if suffix == 1 else f"{stem}-{suffix}"
            branch, path = BRANCH_PREFIX + candidate, root / candidate
            if not _taken(branch, existing) and not path.exists():
                break
            suffix += 1
        path.parent.mkdir(parents=True, exist_ok=True)
        _git(repo, "worktree", "add", "--quiet", "--no-checkout", "-b", branch, str(path), base)
        claim(common_dir, path)  # in the same hold of the lock: a cleanup never sees it unclaimed
    git_dir = Path(_git(path, "rev-parse", "--absolute-git-dir"))
    return Worktree(repo, path, branch, base, git_dir=git_dir, common_dir=common_dir)


def _check_out(worktree: Worktree) -> None:
    _in_worktree(worktree).text("reset", "--quiet", "--hard", worktree.base)


async def create_worktree(
    repo: Path, name: str, ref: str | None = None, root: Path | None = None
) -> Worktree:
    """A new worktree on a new branch `keel/<name>` (suffixed -2, -3… if taken) from HEAD or `ref`.

    Worktrees go under `root` (default: keel's home). Safe to call from many agents at once.
    """
    common_dir = await asyncio.to_thread(lambda: _common_dir(repo_top(repo)))
    async with _serialized(common_dir):  # only git's bookkeeping; checkouts run side by side
        worktree = await asyncio.to_thread(_register, repo, name, ref, root)
    await asyncio.to_thread(_check_out, worktree)
    return worktree


# ---------------------------------------------------------------- save, remove, finish


def _commit_all(worktree: Worktree, message: str) -> str:
    run = _in_worktree(worktree).text
    run("add", "--all")
    if run("status", "--porcelain", "--untracked-files=no"):
        run(
            "commit",
            "--quiet",
            "--no-verify",
            f"--author={KEEL_AUTHOR}",
            "-m",
            message,
        )
    return run("rev-parse", "HEAD")


async def commit_all(worktree: Worktree, message: str) -> str:
    """Commit every change in the worktree (if any) on its branch; returns the branch's head commit."""
    return await asyncio.to_thread(_commit_all, worktree, message)


def _save(
    worktree: Worktree, message: str, patch_path: Path | None, since: str | None
) -> Path | None:
    head = _commit_all(worktree, message)
    since = since or worktree.base
    if head == since:
        return None
    patch = _in_worktree(worktree).binary(
        "diff", "--binary", "--no-color", "--no-ext-diff", since, head
    )
    target = patch_path or worktree.path.parent / f"{worktree.path.name}.patch"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(patch)
    return target


async def save_changes(
    worktree: Worktree,
    message: str = "keel: agent changes",
    patch_path: Path | None = None,
    since: str | None = None,
) -> Path | None:
    """Commit the agent's changes on its branch and write them (from `since`, default the base) as a patch.

    Returns the patch path, or None when nothing changed. The patch goes next to the worktree by default.
    """
    return await asyncio.to_thread(_save, worktree, message, patch_path, since)


def _forget(worktree: Worktree) -> None:
    """git's record of worktrees whose directories are gone (under the lock)."""
    with file_lock(_common_dir(worktree.repo) / LOCK_FILE):
        _git(worktree.repo, "worktree", "prune")


def _remove_empty_folders(worktree: Worktree) -> None:
    """The folders made for a worktree's name (`setup/` of `setup/explore`), and its repository's folder
    under keel's home, once empty (under the lock, so no worktree is being made in them)."""
    depth = worktree.name.count("/")
    root = worktree.path.parents[depth]
    folders = list(worktree.path.parents)[:depth]
    if root.parent == (keel_home() / "worktrees").resolve():
        folders.append(root)
    with file_lock(_common_dir(worktree.repo) / LOCK_FILE):
        for folder in folders:
            try:
                folder.rmdir()
            except OSError:  # not empty (or already gone): its parents are not empty either
                return


async def remove_worktree(worktree: Worktree) -> None:
    """Remove the worktree's directory and git's record of it; its branch (and commits) stay.

    The files are deleted side by side with other agents' work; only the prune is serialized, and
    one prune that starts after a directory is gone covers it, so agents finishing together share one."""
    await asyncio.to_thread(shutil.rmtree, worktree.path, ignore_errors=True)
    release(worktree.path)
    gone_at = time.monotonic()
    common_dir = await asyncio.to_thread(_common_dir, worktree.repo)
    async with _serialized(common_dir):
        if _prune_started.get(common_dir, 0.0) <= gone_at:
            _prune_started[common_dir] = time.monotonic()
            await asyncio.to_thread(_forget, worktree)
    await asyncio.to_thread(_remove_empty_folders, worktree)


def keep_worktree(worktree: Worktree) -> None:
    """Leave the worktree on disk on purpose: a later cleanup of what killed runs left never removes it."""
    release(worktree.path, keep=True)


def _delete_branch_at(worktree: Worktree, commit: str) -> bool:
    with file_lock(_common_dir(worktree.repo) / LOCK_FILE):
        if (
            _git(worktree.repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{worktree.branch}")
            != commit
        ):
            return False
        # with the old value given, git deletes the ref only if it still points there
        _git(worktree.repo, "update-ref", "-d", f"refs/heads/{worktree.branch}", commit)
    return True


async def delete_branch_at(worktree: Worktree, commit: str) -> bool:
    """Delete a removed worktree's branch if it still points at `commit` (its agent committed nothing).

    Returns whether it was deleted; a branch with work on it is never touched."""
    return await asyncio.to_thread(_delete_branch_at, worktree, commit)


async def finish_worktree(
    worktree: Worktree,
    keep: bool = False,
    message: str = "keel: agent changes",
    patch_path: Path | None = None,
) -> Path | None:
    """Save the changes (commit on the branch + patch file), then remove the worktree unless `keep`."""
    try:
        return await save_changes(worktree, message, patch_path)
    finally:
        if not keep:
            await remove_worktree(worktree)
