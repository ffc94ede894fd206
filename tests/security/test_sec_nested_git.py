"""Repositories nested in the workspace (a vendored repo, a submodule's `.git` file, `a/b/.git`): commands
cannot change their git metadata, and keel's own git never runs inside one (where that repository's
config, which a command may have written, would pick the programs git runs)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from keel_cli import git_repo
from sandbox_support import run_in
from sec_jail_support import jail

from keel.agent.core.git.checkpoints import CheckpointStore
from keel.agent.core.git.runner import Git
from keel.tools.base import ToolContext, ToolError
from keel.tools.codeintel.source_files import discover
from keel.tools.exec.git_safety import add_without, gitlinks
from keel.tools.exec.landlock_plan import may_make_mount_namespace
from keel.tools.exec.sandbox_policy import SandboxPolicy

__all__ = ["jail"]  # the fixture, imported for pytest to find

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


def nested_repo(path: Path, files: dict[str, str]) -> Path:
    """A repository of its own inside the workspace, with one commit."""
    git_repo(path, files)
    return path


def hostile_filter(repo: Path, marker: Path) -> None:
    """`repo` runs a clean filter that leaves `marker` whenever git hashes its dirty file."""
    (repo / ".gitattributes").write_text("* filter=evil\n")
    subprocess.run(
        ["git", "config", "filter.evil.clean", f"sh -c 'echo RAN >> {marker}; cat'"],
        cwd=repo,
        check=True,
    )
    (repo / "f.txt").write_text("c\n")  # as long as the committed text: git must hash it
    os.utime(repo / "f.txt", (1e9, 1e9))


async def test_commands_cannot_change_nested_git_metadata(jail, tmp_path: Path):
    if jail == "landlock" and not may_make_mount_namespace():
        pytest.skip("without a mount namespace Landlock cannot keep nested .git read-only")
    root = git_repo(tmp_path / "repo", {"README.md": "top\n"})
    nested_repo(root / "vendor/lib", {"lib.py": "x = 1\n"})
    nested_repo(root / "deep/a/b", {"b.py": "y = 1\n"})
    (root / "mods/sub").mkdir(parents=True)
    (root / "mods/sub/.git").write_text("gitdir: ../../.git/modules/sub\n")
    (root / ".gitmodules").write_text('[submodule "sub"]\n\tpath = mods/sub\n')
    before = {
        name: (root / name).read_text()
        for name in ("vendor/lib/.git/config", "deep/a/b/.git/config", "mods/sub/.git")
    }
    attack = (
        "echo '[core] fsmonitor = touch /tmp/pwned' >> vendor/lib/.git/config; "
        "echo '[core] fsmonitor = touch /tmp/pwned' >> deep/a/b/.git/config; "
        "printf '#!/bin/sh\\n' > deep/a/b/.git/hooks/pre-commit; "
        "printf 'gitdir: /tmp/evil\\n' > mods/sub/.git; "
        "echo ok > vendor/lib/new.txt && echo WORKTREE-WRITABLE"
    )
    ctx = ToolContext(root=root, scratch=tmp_path / "scratch", sandbox=SandboxPolicy())
    try:
        output = await run_in(ctx, attack)
    finally:
        await ctx.aclose()
    assert "WORKTREE-WRITABLE" in output, output
    after = {name: (root / name).read_text() for name in before}
    assert after == before, output
    assert not (root / "deep/a/b/.git/hooks/pre-commit").exists()


def test_keel_git_runs_no_nested_repository_s_filter(tmp_path: Path):
    marker = tmp_path / "marker"
    root = git_repo(tmp_path / "repo", {"README.md": "top\n"})
    evil = nested_repo(root / "vendor/evil", {"f.txt": "a\n"})
    subprocess.run([*GIT, "add", "vendor/evil"], cwd=root, check=True, capture_output=True)
    subprocess.run([*GIT, "commit", "-qm", "vendor"], cwd=root, check=True)
    hostile_filter(evil, marker)
    git = Git(root)
    git.text("status", "--porcelain")
    git.text("diff", "HEAD")
    git.text("add", "--all")
    git.text("add", "--all", "--", ".")
    git.text("commit", "-q", "--allow-empty", "-m", "checkpoint")
    assert not marker.exists(), marker.read_text()


def test_checkpoints_run_no_filter_of_a_repository_a_command_made(tmp_path: Path):
    marker = tmp_path / "marker"
    root = git_repo(tmp_path / "repo", {"README.md": "top\n"})
    store = CheckpointStore(root, home=tmp_path / "home")
    store.snapshot("before")
    made = nested_repo(root / "made", {"f.txt": "a\n"})  # as a command could, in the workspace
    store.snapshot("after the command")  # the new repository is recorded as a gitlink
    hostile_filter(made, marker)
    store.snapshot("next turn")
    assert not marker.exists(), marker.read_text()


def test_code_map_lists_a_vendored_repository_without_its_git(tmp_path: Path):
    root = git_repo(tmp_path / "repo", {"README.md": "top\n"})
    vendored = nested_repo(root / "vendor/lib", {"shown.py": "x = 1\n"})
    (vendored / "hidden.py").write_text("y = 1\n")
    (vendored / ".git/info/exclude").write_text("hidden.py\n")  # the nested repository's own word
    names = [source.rel for source in discover(vendored, root)]
    assert names == ["vendor/lib/hidden.py", "vendor/lib/shown.py"], names


def test_add_leaves_out_gitlinks_wherever_the_paths_go():
    staged = b"100644 aa 0\ta.py\x00160000 bb 0\tvendor/evil\x00160000 cc 0\tmods/sub\x00"
    nested = gitlinks(staged)
    assert nested == ["vendor/evil", "mods/sub"]
    excluded = [":(top,exclude,literal)vendor/evil", ":(top,exclude,literal)mods/sub"]
    assert add_without(["add", "--all"], nested) == ["add", "--all", "--", ":(top)", *excluded]
    assert add_without(["add", "-A", "--", "."], nested) == ["add", "-A", "--", ".", *excluded]
    assert add_without(["add", "-A"], []) == ["add", "-A"]


@pytest.mark.parametrize(
    "path", ["vendor/lib/.git/config", "mods/sub/.git", "a/b/c/d/.GIT/hooks/x"]
)
def test_file_tools_refuse_any_git_at_any_depth(tmp_path: Path, path: str):
    ctx = ToolContext(root=tmp_path, scratch=tmp_path / "scratch", sandbox=SandboxPolicy())
    with pytest.raises(ToolError, match="is protected"):
        ctx.resolve_writable(path)
