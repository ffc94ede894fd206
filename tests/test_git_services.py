"""The git services' one runner and one lock, against real repositories and real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from keel_cli import git_repo

from keel.agent.core.git.checkpoints import CheckpointError, CheckpointStore
from keel.agent.core.git.lock import file_lock
from keel.agent.core.git.runner import Git, GitError, toplevel
from keel.agent.core.git.undo import plan_undo


def test_a_failing_command_raises_the_services_error_naming_it_and_gits_reason(tmp_path):
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git = Git(repo, where="in the test store", error=CheckpointError)
    with pytest.raises(CheckpointError, match=r"^git rev-parse failed in the test store: Needed"):
        git.text("rev-parse", "--verify", "nope^{commit}")
    with pytest.raises(GitError, match=r"^git worktree add failed: "):
        Git(repo).text("worktree", "add", str(tmp_path / "wt"), "no-such-ref")


def test_text_keeps_names_that_are_not_utf8_and_binary_keeps_a_patch_exact(tmp_path):
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    name = os.fsdecode(b"caf\xe9.txt")
    (repo / name).write_bytes(b"\x00\xff binary\n")
    git = Git(repo)
    assert git.text("ls-files", "-z", "--others", strip=False).split("\0")[0] == name
    git.text("add", "--all")
    patch = Git(repo, config=["core.quotePath=false"]).binary("diff", "--cached", "--binary")
    assert b"GIT binary patch" in patch and b"a/caf\xe9.txt" in patch


def test_input_goes_to_gits_stdin(tmp_path):
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    blob = Git(repo).text("hash-object", "-w", "--stdin", input="hello\n")
    assert Git(repo).text("cat-file", "-p", blob) == "hello"


def test_toplevel_from_a_subdirectory_and_none_outside_a_repository(tmp_path):
    repo = git_repo(tmp_path / "repo", {"src/a.py": "a = 1\n"})
    assert toplevel(repo / "src") == repo.resolve()
    outside = tmp_path / "plain"
    outside.mkdir()
    assert toplevel(outside) is None


def test_a_missing_directory_is_not_reported_as_git_missing(tmp_path):
    with pytest.raises(GitError, match="cannot run git in"):
        Git(tmp_path / "gone").text("status")


HOLDER = """
import sys
from pathlib import Path
from keel.agent.core.git.lock import file_lock

with file_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def test_the_lock_excludes_another_process_until_it_lets_go(tmp_path):
    lock = tmp_path / "deep" / "store.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        acquired = threading.Event()

        def take() -> None:
            with file_lock(lock):
                acquired.set()

        taker = threading.Thread(target=take, daemon=True)
        taker.start()
        assert not acquired.wait(0.5), "the lock was taken while another process held it"
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert acquired.wait(30), "the lock was not taken after the other process let go"
        taker.join(30)
    finally:
        holder.kill()
        holder.wait()


def test_undo_plans_and_restores_and_its_own_checkpoint_takes_it_back(tmp_path, monkeypatch):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", {"notes.txt": "before\n"})
    store = CheckpointStore(repo)
    store.snapshot("the turn")
    (repo / "notes.txt").write_text("after\n")
    (repo / "new.txt").write_text("made by the turn\n")

    plan = plan_undo(repo)
    assert plan.target is not None and plan.target.label == "the turn"
    assert sorted((c.action, c.path) for c in plan.changes) == [
        ("D", "new.txt"),
        ("M", "notes.txt"),
    ]
    before = plan.restore()
    assert (repo / "notes.txt").read_text() == "before\n" and not (repo / "new.txt").exists()

    back = plan_undo(repo, before.short_id)
    assert [c.path for c in back.changes] == ["new.txt", "notes.txt"]
    back.restore()
    assert (repo / "notes.txt").read_text() == "after\n" and (repo / "new.txt").is_file()
    with pytest.raises(CheckpointError, match="no checkpoint"):
        plan_undo(repo, "ffffffffff")
