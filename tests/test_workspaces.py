"""keel.agent.core.git.worktrees on real git repositories: isolated worktrees, serialized creation, saved changes, cleanup."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from keel_cli import git_repo

from keel.agent.core.git.worktrees import (
    WorkspaceError,
    create_worktree,
    finish_worktree,
    remove_worktree,
    save_changes,
)

FILES = {"calc.py": "def add(a, b):\n    return a - b\n", "README.md": "calc\n"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def snapshot(repo: Path) -> dict[str, str]:
    """Everything of the user's checkout a worktree must never change."""
    return {
        "status": git(repo, "status", "--porcelain"),
        "head": git(repo, "rev-parse", "HEAD"),
        "branch": git(repo, "branch", "--show-current"),
        "staged": git(repo, "diff", "--cached"),
        "unstaged": git(repo, "diff"),
    }


def worktree_paths(repo: Path) -> list[str]:
    lines = git(repo, "worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in lines if line.startswith("worktree ")]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = git_repo(tmp_path / "repo", FILES)
    # the user is mid-work: one staged and one unstaged change, an untracked file
    (path / "README.md").write_text("calc, staged\n")
    git(path, "add", "README.md")
    (path / "calc.py").write_text("def add(a, b):\n    return a - b  # unstaged\n")
    (path / "notes.txt").write_text("mine\n")
    return path


async def test_worktree_is_a_new_branch_from_head(repo: Path, tmp_path: Path) -> None:
    before = snapshot(repo)
    tree = await create_worktree(repo, "fix-add", root=tmp_path / "trees")
    assert tree.branch == "keel/fix-add"
    assert tree.path == (tmp_path / "trees" / "fix-add").resolve()
    assert tree.base == before["head"].strip()
    # the committed state, not the user's uncommitted edits
    assert (tree.path / "calc.py").read_text() == FILES["calc.py"]
    assert not (tree.path / "notes.txt").exists()
    assert git(tree.path, "branch", "--show-current").strip() == "keel/fix-add"
    assert git(tree.path, "status", "--porcelain") == ""
    assert str(tree.path) in worktree_paths(repo)
    assert snapshot(repo) == before
    await remove_worktree(tree)


async def test_worktree_from_a_ref(repo: Path, tmp_path: Path) -> None:
    old = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "staged")
    git(repo, "tag", "v1", old)
    tree = await create_worktree(repo, "old", ref="v1", root=tmp_path / "trees")
    assert tree.base == old
    assert (tree.path / "README.md").read_text() == FILES["README.md"]
    await remove_worktree(tree)


async def test_bad_ref_and_no_repo_are_clear_errors(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="'nope' is not a commit"):
        await create_worktree(repo, "x", ref="nope", root=tmp_path / "trees")
    (tmp_path / "plain").mkdir()
    with pytest.raises(WorkspaceError, match="not inside a git repository"):
        await create_worktree(tmp_path / "plain", "x", root=tmp_path / "trees")
    assert worktree_paths(repo) == [str(repo)]


async def test_parallel_creation_gives_each_agent_its_own_branch(
    repo: Path, tmp_path: Path
) -> None:
    before = snapshot(repo)
    trees = await asyncio.gather(
        *(create_worktree(repo, "agent", root=tmp_path / "trees") for _ in range(8))
    )
    branches = sorted(tree.branch for tree in trees)
    assert branches == sorted(["keel/agent", *(f"keel/agent-{n}" for n in range(2, 9))])
    assert len({tree.path for tree in trees}) == 8
    assert all((tree.path / "calc.py").is_file() for tree in trees)
    await asyncio.gather(*(remove_worktree(tree) for tree in trees))
    assert worktree_paths(repo) == [str(repo)]
    assert snapshot(repo) == before


def test_creation_is_serialized_across_processes(repo: Path, tmp_path: Path) -> None:
    """Processes asking for the same name at once must each get their own (the file lock decides)."""
    script = textwrap.dedent(
        f"""
        import asyncio
        from pathlib import Path
        from keel.agent.core.git.worktrees import create_worktree

        async def main():
            trees = await asyncio.gather(*(create_worktree(Path({str(repo)!r}), "agent", root=Path({str(tmp_path / "trees")!r})) for _ in range(4)))
            print(" ".join(t.branch for t in trees))

        asyncio.run(main())
        """
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [process.communicate(timeout=120) for process in processes]
    assert all(process.returncode == 0 for process in processes), [err for _, err in outputs]
    branches = [branch for out, _ in outputs for branch in out.split()]
    assert len(branches) == 12 and len(set(branches)) == 12
    assert len(worktree_paths(repo)) == 13
    assert git(repo, "fsck").strip() == ""


async def test_finish_commits_on_the_branch_writes_a_patch_and_removes_the_tree(
    repo: Path, tmp_path: Path
) -> None:
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 1\n")
    (hooks / "post-commit").write_text(f"#!/bin/sh\ntouch {tmp_path / 'hook-ran'}\n")
    for hook in ("pre-commit", "post-commit"):
        (hooks / hook).chmod(0o755)
    before = snapshot(repo)
    tree = await create_worktree(repo, "fix", root=tmp_path / "trees")
    (tree.path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tree.path / "test_calc.py").write_text("from calc import add\n")

    patch = await finish_worktree(
        tree, patch_path=tmp_path / "out" / "fix.patch", message="fix add"
    )
    assert patch == tmp_path / "out" / "fix.patch"
    text = patch.read_text()
    assert "+    return a + b" in text and "test_calc.py" in text
    assert not tree.path.exists()
    assert worktree_paths(repo) == [str(repo)]
    assert not (tmp_path / "hook-ran").exists()
    log = git(repo, "log", "-1", "--format=%an <%ae>|%s", "keel/fix").strip()
    assert log == "keel <keel@localhost>|fix add"
    assert git(repo, "show", "keel/fix:calc.py") == "def add(a, b):\n    return a + b\n"
    assert snapshot(repo) == before
    # the patch applies to the commit the agent started from
    check = await create_worktree(repo, "check", root=tmp_path / "trees")
    git(check.path, "apply", "--check", str(patch))
    await remove_worktree(check)
    assert git(repo, "fsck").strip() == ""


async def test_finish_without_changes_and_keep(repo: Path, tmp_path: Path) -> None:
    tree = await create_worktree(repo, "idle", root=tmp_path / "trees")
    assert await finish_worktree(tree) is None
    assert not tree.path.exists()
    assert git(repo, "rev-parse", "keel/idle") == git(repo, "rev-parse", "HEAD")

    kept = await create_worktree(repo, "kept", root=tmp_path / "trees")
    (kept.path / "new.txt").write_text("x\n")
    patch = await finish_worktree(kept, keep=True)
    assert patch is not None and patch.parent == kept.path.parent
    assert kept.path.is_dir() and str(kept.path) in worktree_paths(repo)
    assert git(kept.path, "status", "--porcelain") == ""
    # saving again with nothing new changes nothing; the branch keeps the first commit
    head = git(repo, "rev-parse", "keel/kept")
    assert await save_changes(kept, since=head.strip()) is None
    await remove_worktree(kept)
    assert worktree_paths(repo) == [str(repo)]


async def test_removing_a_tree_whose_directory_is_gone(repo: Path, tmp_path: Path) -> None:
    tree = await create_worktree(repo, "gone", root=tmp_path / "trees")
    shutil.rmtree(tree.path)
    await remove_worktree(tree)
    assert worktree_paths(repo) == [str(repo)]
    again = await create_worktree(repo, "gone", root=tmp_path / "trees")
    assert again.branch == "keel/gone-2"  # the old branch is kept, so the name moves on
    await remove_worktree(again)


def test_branch_and_tracked_file_count_are_read_from_git_files(tmp_path):
    from keel.agent.core.context.budget import count_repo_files
    from keel.agent.core.workspace_facts import _git_branch

    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n", "sub/b.txt": "b\n", "sub/c.txt": "c\n"})
    assert (_git_branch(repo / "sub"), count_repo_files(repo / "sub")) == ("main", 3)
    linked = tmp_path / "linked"
    subprocess.run(
        ["git", "worktree", "add", "-q", "-b", "feature", str(linked)], cwd=repo, check=True
    )
    (linked / "d.txt").write_text("d\n")
    subprocess.run(["git", "add", "d.txt"], cwd=linked, check=True)
    assert (_git_branch(linked), count_repo_files(linked)) == (
        "feature",
        4,
    )  # its own HEAD and index
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=repo, check=True)
    assert _git_branch(repo) == "HEAD"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert (_git_branch(plain), count_repo_files(plain)) == (None, 0)
