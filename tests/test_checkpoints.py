"""Checkpoints and `keel undo` on real git repositories: command-made changes undone, the user's git untouched."""

from __future__ import annotations

import hashlib
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from keel_cli import git_repo, keel_env

from keel.agent.core.git.checkpoints import CheckpointGuard, CheckpointStore, FileChange

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
# `keel undo` as a real process; the same parser and command the `keel` console script dispatches to.
UNDO_MAIN = (
    "import argparse, sys\n"
    "from keel.agent.cli.undo import add_undo_parser, undo_command\n"
    "parser = argparse.ArgumentParser(prog='keel')\n"
    "add_undo_parser(parser.add_subparsers(dest='command'))\n"
    "from keel.agent.core.errors import KeelError\n"
    "try:\n"
    "    sys.exit(undo_command(parser.parse_args(sys.argv[1:])))\n"
    "except KeelError as exc:\n"
    "    print(f'keel: {exc}', file=sys.stderr); sys.exit(exc.exit_code)\n"
)


def sh(command: str, cwd: Path) -> None:
    """A change made by a command, the way run_command makes it: a real shell writing real files."""
    subprocess.run(["bash", "-c", command], cwd=cwd, check=True)


def git(repo: Path, *args: str) -> str:
    # GIT_OPTIONAL_LOCKS=0: `git status` must not refresh the index we are comparing byte for byte
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    return subprocess.run(
        [*GIT, *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout


def tree_hash(root: Path) -> str:
    """Every file's path, mode and bytes, and every link's target, under root."""
    digest = hashlib.sha256()
    for directory, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(directory, d))]):
            path = os.path.join(directory, name)
            digest.update(os.fsencode(os.path.relpath(path, root)))
            if os.path.islink(path):
                digest.update(b"->" + os.fsencode(os.readlink(path)))
            else:
                digest.update(oct(os.stat(path).st_mode).encode())
                digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def user_git_state(repo: Path) -> dict[str, object]:
    return {
        "status": git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        "stash": git(repo, "stash", "list"),
        "branches": git(repo, "branch", "-a", "-v"),
        "head": git(repo, "rev-parse", "HEAD"),
        "symbolic_head": git(repo, "symbolic-ref", "HEAD"),
        "index": (repo / ".git" / "index").read_bytes(),
        "dotgit": tree_hash(repo / ".git"),
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository in a lived-in state: a stash, a second branch, a staged change, ignored files."""
    repo = git_repo(
        tmp_path / "repo",
        {
            "src/app.py": "print('app')\n",
            "README.md": "# demo\n",
            "old.txt": "to be removed\n",
            ".gitignore": "*.log\nbuild/\n",
        },
    )
    sh("echo stashed >> README.md", repo)
    subprocess.run([*GIT, "stash", "-q"], cwd=repo, check=True)
    subprocess.run([*GIT, "branch", "feature"], cwd=repo, check=True)
    sh("echo staged > staged.txt && git add staged.txt && echo draft > notes.txt", repo)
    sh("echo old log > run.log && mkdir -p build && echo artifact > build/out.bin", repo)
    return repo


def test_restore_undoes_command_changes_and_never_touches_the_users_git(repo, tmp_path):
    before_state = user_git_state(repo)
    before_files = tree_hash(repo)
    store = CheckpointStore(repo, home=tmp_path / "home")
    checkpoint = store.snapshot("fix the app", "session-1")
    assert user_git_state(repo) == before_state, "taking a snapshot changed the user's git state"
    assert not str(store.dir).startswith(str(repo))

    sh("echo x > new.txt", repo)  # what a model's `run_command` does: not an edit tool
    sh(
        "sed -i 's/app/changed/' src/app.py && rm old.txt && mkdir -p pkg/sub && echo m > pkg/sub/mod.py",
        repo,
    )
    sh(
        "echo notes changed >> notes.txt && echo new log > run.log && echo new > build/new.bin",
        repo,
    )
    sh("git stash list > /dev/null", repo)

    changes = store.changes(checkpoint)
    assert set(changes) == {
        FileChange("D", "new.txt"),
        FileChange("D", "pkg/sub/mod.py"),
        FileChange("M", "src/app.py"),
        FileChange("M", "notes.txt"),
        FileChange("A", "old.txt"),
    }
    store.restore(checkpoint)

    assert not (repo / "new.txt").exists() and not (repo / "pkg").exists()
    assert (repo / "src/app.py").read_text() == "print('app')\n"
    assert (repo / "old.txt").read_text() == "to be removed\n"
    assert (repo / "notes.txt").read_text() == "draft\n"
    # ignored files are neither snapshotted nor restored: the command's changes to them stay
    assert (repo / "run.log").read_text() == "new log\n" and (repo / "build/new.bin").exists()
    sh("echo old log > run.log && rm build/new.bin", repo)
    assert tree_hash(repo) == before_files
    assert user_git_state(repo) == before_state, "restoring changed the user's git state"


def test_outside_a_repository_snapshots_everything_but_junk(tmp_path):
    workspace = tmp_path / "plain"
    (workspace / "node_modules/lib").mkdir(parents=True)
    (workspace / "node_modules/lib/index.js").write_text("module.exports = 1\n")
    (workspace / "notes.md").write_text("v1\n")
    store = CheckpointStore(workspace, home=tmp_path / "home")
    checkpoint = store.snapshot("turn one", "s")

    sh(
        "echo v2 > notes.md && echo extra > extra.txt && echo 2 > node_modules/lib/index.js",
        workspace,
    )
    assert {c.path for c in store.changes(checkpoint)} == {"notes.md", "extra.txt"}
    store.restore(checkpoint)
    assert (workspace / "notes.md").read_text() == "v1\n"
    assert not (workspace / "extra.txt").exists()
    assert (
        workspace / "node_modules/lib/index.js"
    ).read_text() == "2\n"  # junk is never snapshotted


def test_symlinks_modes_binary_files_and_odd_names_come_back_exactly(tmp_path):
    workspace = git_repo(tmp_path / "repo", {"a.txt": "a\r\nwindows\r\n"})
    sh(
        "printf '\\x00\\x01\\xff' > blob.bin && ln -s a.txt link && printf '#!/bin/sh\\n' > run.sh && chmod +x run.sh",
        workspace,
    )
    sh("printf latin > $'caf\\xe9.txt' && printf spaced > 'with space.txt'", workspace)
    before = tree_hash(workspace)
    store = CheckpointStore(workspace, home=tmp_path / "home")
    checkpoint = store.snapshot("t", "s")
    sh(
        "rm link && ln -s blob.bin link && chmod -x run.sh && printf 'unix\\n' > a.txt && rm blob.bin",
        workspace,
    )
    sh(
        "rm $'caf\\xe9.txt' && printf x > $'new\\xff.txt' && printf changed > 'with space.txt'",
        workspace,
    )
    assert {c.path for c in store.changes(checkpoint)} >= {
        "caf\udce9.txt",
        "new\udcff.txt",
        "with space.txt",
    }
    store.restore(checkpoint)
    assert tree_hash(workspace) == before


async def test_guard_takes_one_checkpoint_per_turn(tmp_path):
    workspace = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    errors: list[str] = []
    guard = CheckpointGuard(workspace, "session-9", on_error=errors.append, home=tmp_path / "home")
    first = await guard.before_change("add b")
    assert first is not None and first.label == "add b" and first.session_id == "session-9"
    assert await guard.before_change("add b") is None  # later changes of the same turn
    guard.new_turn()
    second = await guard.before_change("add c")
    assert second is not None and second.id != first.id
    assert [c.label for c in guard.store.all()] == ["add c", "add b"]
    assert errors == []


async def test_guard_reports_a_failure_once_and_never_raises(tmp_path):
    blocker = tmp_path / "home-is-a-file"
    blocker.write_text("not a directory")
    errors: list[str] = []
    guard = CheckpointGuard(tmp_path, "s", on_error=errors.append, home=blocker)
    assert await guard.before_change("t") is None
    guard.new_turn()
    assert await guard.before_change("t2") is None
    assert len(errors) == 1 and "checkpoints are off" in errors[0]


def keel_undo(
    repo: Path, home: Path, *args: str, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", UNDO_MAIN, "undo", *args],
        cwd=repo,
        env=keel_env(home),
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def two_turns(repo: Path, home: Path) -> CheckpointGuard:
    """Two agent turns, as the session drives the guard: checkpoint, then the turn's changes."""
    guard = CheckpointGuard(repo, "20250101-000000-abcdef", home=home)
    await guard.before_change("write the greeting")
    sh("echo hello > greeting.txt && echo one >> README.md", repo)
    guard.new_turn()
    await guard.before_change("make it louder")
    sh("echo HELLO > greeting.txt && rm src/app.py && echo log > loud.txt", repo)
    return guard


async def test_keel_undo_steps_back_turn_by_turn_and_is_itself_undoable(repo, tmp_path):
    home = tmp_path / "home"
    state = user_git_state(repo)
    await two_turns(repo, home)

    listed = keel_undo(repo, home, "--list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert "make it louder" in lines[1] and "write the greeting" in lines[2]  # newest first
    assert "20250101-000000-abcdef" in lines[1]

    refused = keel_undo(repo, home)  # no TTY on stdin to ask on, and no --yes: nothing is changed
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert (repo / "greeting.txt").read_text() == "HELLO\n"

    first = keel_undo(repo, home, "--yes")
    assert first.returncode == 0, first.stderr
    assert "revert   greeting.txt" in first.stdout and "delete   loud.txt" in first.stdout
    assert "restore  src/app.py" in first.stdout
    assert (repo / "greeting.txt").read_text() == "hello\n" and (repo / "src/app.py").exists()
    assert not (repo / "loud.txt").exists()

    second = keel_undo(repo, home, "--yes")  # the next undo goes one turn further back
    assert second.returncode == 0, second.stderr
    assert not (repo / "greeting.txt").exists()
    assert (repo / "README.md").read_text() == "# demo\n"
    assert user_git_state(repo) == state

    redo_id = second.stdout.strip().split()[-1]  # "To take this back: keel undo ID"
    redo = keel_undo(repo, home, redo_id, "--yes")
    assert redo.returncode == 0, redo.stderr
    assert (repo / "greeting.txt").read_text() == "hello\n"

    unknown = keel_undo(repo, home, "ffffffffff")
    assert unknown.returncode == 2 and "keel undo --list" in unknown.stderr


async def test_keel_undo_asks_at_a_terminal(repo, tmp_path):
    home = tmp_path / "home"
    await two_turns(repo, home)
    for answer, code, greeting in ((b"n\n", 1, "HELLO\n"), (b"y\n", 0, "hello\n")):
        leader, follower = pty.openpty()
        os.write(leader, answer)
        result = keel_undo(repo, home, stdin=follower)
        os.close(leader)
        os.close(follower)
        assert result.returncode == code, result.stdout + result.stderr
        assert "Restore these files? [y/N]" in result.stdout
        assert (repo / "greeting.txt").read_text() == greeting


def test_no_checkpoints_is_a_usage_error(tmp_path):
    workspace = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    result = keel_undo(workspace, tmp_path / "home")
    assert result.returncode == 2 and "no checkpoints" in result.stderr
