"""`keel batch` runs killed mid-run (SIGKILL: no cleanup of their own) leave worktrees and branches; the next
run removes them, keeping the work on them, and says what it removed. Real processes, a real repo."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

from batch_support import FILES, git, model_flags, rows_of, write_tasks
from keel_cli import KEEL, git_repo, keel_env

from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall


class Agent:
    """t0 edits calc.py, then waits on its next reply; t1 waits on its first; other tasks, or all once `hang`
    is off, answer at once."""

    def __init__(self) -> None:
        self.hang = True

    def __call__(self, request: ChatRequest) -> Reply:
        task = re.search(r"task (t\d+)", str(request.messages)).group(1)
        delay = 120.0 if self.hang and task in ("t0", "t1") else 0.0
        if any(m.get("role") == "tool" for m in request.messages):
            return Reply(text=f"done with {task}", delay=delay)
        if task == "t1":
            return Reply(text="nothing to change", delay=delay)
        edit = {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}
        return Reply(tool_calls=[ScriptedToolCall(name="edit_file", arguments=edit)])


def start_batch(args: list[str], cwd: Path, home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [KEEL, "batch", *args], cwd=cwd, env=keel_env(home),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def wait_for_requests(server, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while len(server.requests) < count and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1]
        time.sleep(0.1)
    time.sleep(0.5)  # the edit of t0 is on disk before its second request; nothing else is pending


def run_batch(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KEEL, "batch", *args], cwd=cwd, env=keel_env(home),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip


def kill_mid_run(args: list[str], cwd: Path, home: Path, server, waiting: int) -> None:
    """Start `keel batch ARGS`, and SIGKILL it once `waiting` requests more than before reached the server."""
    before = len(server.requests)
    process = start_batch(args, cwd, home)
    wait_for_requests(server, before + waiting, process)
    process.kill()
    process.communicate(timeout=30)


def batch_worktrees(repo: Path) -> list[str]:
    listing = git(repo, "worktree", "list", "--porcelain")
    return [line for line in listing.splitlines() if line.startswith("branch refs/heads/keel/")]


def batch_branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--list", "keel/*", "--format=%(refname:short)").split()


def test_killed_runs_leave_nothing_behind_after_the_next_run(scripted_server, tmp_path):
    agent = Agent()
    server = scripted_server(agent)
    repo = git_repo(tmp_path / "repo", FILES)
    out, home = tmp_path / "out", tmp_path / "home"
    tasks = write_tasks(tmp_path / "tasks.jsonl", ["t0", "t1"], repo)
    args = [str(tasks), *model_flags(server.url), "--out", str(out), "-j", "2"]

    kill_mid_run(args, tmp_path, home, server, waiting=3)
    assert len(batch_worktrees(repo)) == 2, "the killed run left its two worktrees"
    kill_mid_run([*args, "--resume"], tmp_path, home, server, waiting=3)
    assert len(batch_worktrees(repo)) == 2, "the resumed run removed the first two, then made two"
    # t0's work of each killed run is kept on a branch of its own; t1's branches had none
    assert sorted(batch_branches(repo)) == [
        "keel/batch/t0-1",
        "keel/batch/t0-1-2",
        "keel/batch/t1-1",
    ]

    agent.hang = False
    result = run_batch([*args, "--resume"], tmp_path, home)
    assert result.returncode == 0, result.stderr
    assert (
        f"keel batch: removed 2 worktrees that runs which were killed left in {repo}: "
        "keel/batch/t0-1-2, keel/batch/t1-1" in result.stderr
    )
    assert "keel batch: deleted 1 branch without work on them: keel/batch/t1-1" in result.stderr
    assert "keel batch: kept 1 branch with work on them" in result.stderr
    rows = rows_of(out)
    assert sorted((r.key, r.status) for r in rows) == [
        (("t0", 1), "completed"),
        (("t1", 1), "completed"),
    ]
    assert batch_worktrees(repo) == []
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    [t0_row] = [r for r in rows if r.id == "t0"]
    assert sorted(batch_branches(repo)) == sorted(
        ["keel/batch/t0-1", "keel/batch/t0-1-2", t0_row.branch]
    )
    for kept in ("keel/batch/t0-1", "keel/batch/t0-1-2"):
        assert "a + b" in git(repo, "show", f"{kept}:calc.py")
        assert "killed" in git(repo, "log", "-1", "--format=%s", kept)
    leftovers = (
        [p for p in (home / "worktrees").rglob("*")] if (home / "worktrees").exists() else []
    )
    assert leftovers == []
    assert (
        git(repo, "status", "--porcelain") == ""
        and git(repo, "branch", "--show-current") == "main\n"
    )


def test_worktrees_of_running_and_kept_attempts_are_left_alone(scripted_server, tmp_path):
    server = scripted_server(Agent())
    repo = git_repo(tmp_path / "repo", FILES)
    home = tmp_path / "home"
    running = write_tasks(tmp_path / "running.jsonl", ["t0", "t1"], repo)
    flags = [*model_flags(server.url), "-j", "2"]
    process = start_batch([str(running), *flags, "--out", str(tmp_path / "a")], tmp_path, home)
    try:
        wait_for_requests(server, 3, process)
        assert len(batch_worktrees(repo)) == 2

        kept = write_tasks(tmp_path / "kept.jsonl", ["t2"], repo)
        result = run_batch(
            [str(kept), *flags, "--out", str(tmp_path / "b"), "--keep-worktrees"], tmp_path, home
        )
        assert result.returncode == 0, result.stderr
        assert "removed" not in result.stderr
        other = write_tasks(tmp_path / "other.jsonl", ["t3"], repo)
        result = run_batch([str(other), *flags, "--out", str(tmp_path / "c")], tmp_path, home)
        assert result.returncode == 0, result.stderr
        assert "removed" not in result.stderr and "deleted" not in result.stderr

        # the running batch's two worktrees and the one kept on purpose are all still there
        assert sorted(batch_worktrees(repo)) == [
            "branch refs/heads/keel/batch/t0-1",
            "branch refs/heads/keel/batch/t1-1",
            "branch refs/heads/keel/batch/t2-1",
        ]
        assert process.poll() is None
        assert (
            "a + b" in (home / "worktrees").glob("repo-*/batch/t0-1/calc.py").__next__().read_text()
        )
    finally:
        process.kill()
        process.communicate(timeout=30)


def test_a_record_pointing_elsewhere_never_gets_a_folder_removed(tmp_path):
    """A left-behind worktree is removed; a record whose gitdir was changed to name another repository is
    not followed: that repository stays as it was."""
    from keel.agent.core.git.abandoned import remove_abandoned

    repo = git_repo(tmp_path / "repo", FILES)
    for name in ("gone", "moved"):
        git(repo, "worktree", "add", "-q", "-b", f"keel/batch/{name}", str(tmp_path / name))
    precious = git_repo(tmp_path / "precious", {"notes.txt": "keep me\n"})  # another repository
    (repo / ".git" / "worktrees" / "moved" / "gitdir").write_text(f"{precious}/.git\n")

    cleanup = remove_abandoned(repo, "batch/", "saved", ())
    assert cleanup.removed_worktrees == ["keel/batch/gone"]
    assert cleanup.deleted_branches == ["keel/batch/gone"]
    assert cleanup.unsaved == [str(precious)]
    assert not (tmp_path / "gone").exists()
    assert (precious / "notes.txt").read_text() == "keep me\n"
    assert batch_branches(repo) == ["keel/batch/moved"]
