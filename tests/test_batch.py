"""`keel batch` end to end: the real command, the scripted server, a real git repo, worktrees per attempt."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from batch_support import (
    BATCH,
    FILES,
    FIXES,
    Agent,
    check_batch_outcome,
    git,
    leftover_files,
    model_flags,
    rows_of,
    run_batch,
    snapshot,
    task_of,
    write_tasks,
)
from keel_cli import git_repo, keel_env, run_keel

from keel.agent.harness.batch.results import ResultRow
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall
from keel.tools.exec.sandbox import bwrap_problem


def test_eight_tasks_two_attempts_four_at_once(scripted_server, tmp_path):
    server = scripted_server(Agent())
    repo = git_repo(tmp_path / "repo", FILES)
    before = snapshot(repo)
    tasks = write_tasks(tmp_path / "tasks.jsonl", list(FIXES), repo)
    out, home = tmp_path / "out", tmp_path / "home"
    result = run_batch(
        str(tasks),
        *model_flags(server.url),
        "-j",
        "4",
        "--attempts",
        "2",
        "--out",
        str(out),
        cwd=tmp_path,
        home=home,
    )
    check_batch_outcome(result, repo, out, home, before)
    progress = [
        line for line in result.stderr.splitlines() if re.match(r"keel batch: t\d#\d ", line)
    ]
    assert len(progress) == 16 and "attempts 16/16" in progress[-1] and "tasks 8/8" in progress[-1]


def test_resume_runs_only_attempts_without_a_result(scripted_server, tmp_path):
    agent = Agent({"t0": [True], "t1": [False], "t2": [True]})
    server = scripted_server(agent)
    repo = git_repo(tmp_path / "repo", FILES)
    out, home = tmp_path / "out", tmp_path / "home"
    flags = ["--model", "openai/any", "--api-base", server.url, "--out", str(out)]
    first = run_batch(
        str(write_tasks(tmp_path / "tasks.jsonl", ["t0", "t1"], repo)),
        *flags,
        cwd=tmp_path,
        home=home,
    )
    assert first.returncode == 0, first.stderr
    assert sorted((r.key, r.passed) for r in rows_of(out)) == [
        (("t0", 1), True),
        (("t1", 1), False),
    ]

    again = run_batch(str(tmp_path / "tasks.jsonl"), *flags, cwd=tmp_path, home=home)
    assert again.returncode == 2 and "--resume" in again.stderr

    # t1's attempt counts as interrupted now (its newest row), a task and a second attempt are added
    with open(out / "results.jsonl", "a") as results:
        results.write(ResultRow(id="t1", attempt=1, status="interrupted").to_json() + "\n")
    write_tasks(tmp_path / "tasks.jsonl", ["t0", "t1", "t2"], repo)
    resumed = run_batch(
        str(tmp_path / "tasks.jsonl"),
        *flags,
        "--resume",
        "--attempts",
        "2",
        cwd=tmp_path,
        home=home,
    )
    assert resumed.returncode == 0, resumed.stderr
    new_rows = rows_of(out)[3:]
    assert sorted(r.key for r in new_rows) == [
        ("t0", 2),
        ("t1", 1),
        ("t1", 2),
        ("t2", 1),
        ("t2", 2),
    ]
    assert agent.started == Counter({"t0": 2, "t1": 3, "t2": 2})
    summary = json.loads((out / "summary.json").read_text())
    assert [(t["id"], t["attempts"], t["passed"]) for t in summary["tasks"]] == [
        ("t0", 2, 2),
        ("t1", 2, 0),
        ("t2", 2, 2),
    ]
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_ctrl_c_interrupts_running_attempts_and_cleans_up(scripted_server, tmp_path):
    agent = Agent({f"t{n}": [True] for n in range(4)}, delay=30)
    server = scripted_server(agent)
    repo = git_repo(tmp_path / "repo", FILES)
    before = snapshot(repo)
    out, home = tmp_path / "out", tmp_path / "home"
    tasks = write_tasks(tmp_path / "tasks.jsonl", ["t0", "t1", "t2", "t3"], repo)
    flags = [str(tasks), *model_flags(server.url), "--out", str(out), "-j", "2"]
    process = subprocess.Popen(
        [*BATCH, *flags],
        cwd=tmp_path,
        env=keel_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while len(server.requests) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    assert len(server.requests) == 2, "two agents should be waiting on the model"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "stopping" in stderr and "--resume" in stderr
    rows = rows_of(out)
    assert sorted(r.key for r in rows) == [("t0", 1), ("t1", 1)]
    assert all(r.status == "interrupted" and not r.passed for r in rows)
    assert snapshot(repo) == before
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert leftover_files(home / "worktrees") == []

    agent.delay = 0
    resumed = run_batch(*flags, "--resume", cwd=tmp_path, home=home)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(r.key for r in rows_of(out)[2:]) == [(f"t{n}", 1) for n in range(4)]
    assert json.loads((out / "summary.json").read_text())["pass_at_1"] == 1.0


def test_failed_setup_and_a_hanging_test_are_recorded(scripted_server, tmp_path):
    server = scripted_server(Agent({"t5": [True]}))
    repo = git_repo(tmp_path / "repo", FILES)
    out, home = tmp_path / "out", tmp_path / "home"
    tasks = [
        {
            "id": "broken",
            "prompt": "task t0",
            "repo": str(repo),
            "setup": ["true", "echo no-deps >&2; exit 3"],
        },
        {
            "id": "slow",
            "prompt": "task t5",
            "repo": str(repo),
            "test": "sleep 29.25 & sleep 29.25; true",
        },
    ]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    result = run_batch(
        "tasks.jsonl",
        *model_flags(server.url),
        "--out",
        str(out),
        "--command-timeout",
        "2",
        cwd=tmp_path,
        home=home,
    )
    assert result.returncode == 0, result.stderr
    # the hanging command's whole process group was killed, its background child too
    assert (
        subprocess.run(["pgrep", "-f", "sleep 29.25"], capture_output=True, check=False).stdout
        == b""
    )
    broken, slow = sorted(rows_of(out), key=lambda row: row.id)
    assert broken.status == "setup_failed" and not broken.passed and broken.session_log is None
    assert "exited with 3" in broken.reason and "no-deps" in broken.reason
    assert slow.status == "completed" and not slow.passed and "timed out" in slow.reason
    assert "+    return a + b" in Path(slow.patch).read_text()
    assert all(task_of(request) == "t5" for request in server.requests)
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            ['{"id": "a", "prompt": "x"}', '{"id": "b", "prompt": "y"}', '{"id": "c", "prompt": '],
            "line 3: not valid JSON",
        ),
        (
            ['{"id": "a", "prompt": "x"}', "", '{"id": "b"}'],
            "line 3: missing required field 'prompt'",
        ),
        (['{"id": "a", "prompt": "x", "tests": "pytest"}'], "line 1: unknown field 'tests'"),
        (['{"id": "a", "prompt": "x"}', '{"id": "a", "prompt": "y"}'], "line 2: duplicate id 'a'"),
        (['{"id": "a", "prompt": "x", "budget": 0}'], "line 1: bad value for 'budget'"),
        (
            ['{"id": "a", "prompt": "x", "ref": "no-such-branch"}'],
            "line 1: ref 'no-such-branch' is not a commit",
        ),
        (['["a", "x"]'], "line 1: expected a JSON object"),
    ],
)
def test_a_malformed_tasks_file_is_a_usage_error_naming_the_line(tmp_path, lines, message):
    repo = git_repo(tmp_path / "repo", FILES)
    (repo / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    result = run_batch(
        "tasks.jsonl",
        "--model",
        "openai/any",
        "--out",
        str(tmp_path / "out"),
        cwd=repo,
        home=tmp_path / "home",
        timeout=60,
    )
    assert result.returncode == 2
    assert message in result.stderr and "tasks.jsonl" in result.stderr
    assert not (tmp_path / "out").exists()


def test_an_attempt_that_errors_keeps_its_error_and_its_branch_is_removed(tmp_path):
    repo = git_repo(tmp_path / "repo", FILES)
    before = snapshot(repo)
    out, home = tmp_path / "out", tmp_path / "home"
    config = home / "config" / "keel" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("retries = 0\n")
    tasks = write_tasks(tmp_path / "tasks.jsonl", ["t0"], repo)
    result = run_batch(
        str(tasks),
        "--model",
        "openai/any",
        "--api-base",
        "http://127.0.0.1:9/v1",
        "--out",
        str(out),
        cwd=tmp_path,
        home=home,
    )
    assert result.returncode == 1, result.stderr
    [row] = rows_of(out)
    assert row.status == "error" and not row.passed
    assert "APIConnectionError" in row.reason and "127.0.0.1:9" in row.reason, row.reason
    assert f"keel batch: t0#1 error fail ({row.reason}) · " in result.stderr  # in full, not cut
    # nothing was done, so nothing is left in the user's repository
    assert row.branch is None and row.patch is None
    assert git(repo, "branch", "--list", "keel/*") == "" and snapshot(repo) == before


def test_only_attempts_that_changed_something_keep_a_branch(scripted_server, tmp_path):
    def agent(request: ChatRequest) -> Reply:
        if task_of(request) == "t1" and not any(m.get("role") == "tool" for m in request.messages):
            edit = {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}
            return Reply(tool_calls=[ScriptedToolCall(name="edit_file", arguments=edit)])
        return Reply(text="nothing to change")

    server = scripted_server(agent)
    repo = git_repo(tmp_path / "repo", FILES)
    out, home = tmp_path / "out", tmp_path / "home"
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", ["t0", "t1"], repo
    )  # setup commits `.ready` on each branch
    result = run_batch(
        str(tasks), *model_flags(server.url), "--out", str(out), cwd=tmp_path, home=home
    )
    assert result.returncode == 0, result.stderr
    idle, worker = sorted(rows_of(out), key=lambda row: row.id)
    assert idle.branch is None and idle.patch is None and not idle.passed
    assert worker.passed and worker.patch and worker.branch
    assert git(repo, "branch", "--list", "keel/*", "--format=%(refname:short)").split() == [
        worker.branch
    ]
    assert "a + b" in git(repo, "show", f"{worker.branch}:calc.py")
    # one attempt per task: pass@1 once in the table and once in the totals, no pass@k beside it
    assert result.stdout.count("pass@1") == 2 and "pass@1 0.500" in result.stdout


@pytest.mark.parametrize("where", ["before batch", "after batch"])
def test_approval_and_sandbox_flags_reach_every_attempt(scripted_server, tmp_path, where):
    server = scripted_server(Agent({"t0": [True]}))
    repo = git_repo(tmp_path / "repo", FILES)
    out, home = tmp_path / "out", tmp_path / "home"
    tasks = write_tasks(tmp_path / "tasks.jsonl", ["t0"], repo)
    policy = ["--approval", "read-only", "--sandbox", "read-only"]
    batch = ["batch", str(tasks), *model_flags(server.url), "--out", str(out)]
    args = [*policy, *batch] if where == "before batch" else [*batch, *policy]
    result = run_keel(*args, cwd=tmp_path, home=home)
    assert result.returncode == 0, result.stderr
    [row] = rows_of(out)
    events = [json.loads(line) for line in Path(row.session_log).read_text().splitlines()]
    assert events[0]["approval"] == "read-only"
    [edit] = [e for e in events if e["type"] == "tool.finished"]
    assert not edit["ok"] and edit["output"].startswith(
        "Denied: the approval policy is 'read-only'"
    )
    assert not row.passed and row.branch is None


def test_the_sandbox_flag_confines_batch_commands(scripted_server, tmp_path):
    problem = asyncio.run(bwrap_problem(shutil.which("bwrap")))
    if problem:
        pytest.skip(f"no sandbox here: {problem}")

    def agent(request: ChatRequest) -> Reply:
        if any(m.get("role") == "tool" for m in request.messages):
            return Reply(text="tried")
        return Reply(
            tool_calls=[
                ScriptedToolCall(name="run_command", arguments={"command": "touch made.txt"})
            ]
        )

    server = scripted_server(agent)
    repo = git_repo(tmp_path / "repo", FILES)
    out, home = tmp_path / "out", tmp_path / "home"
    tasks = write_tasks(tmp_path / "tasks.jsonl", ["t0"], repo)
    result = run_batch(
        str(tasks),
        *model_flags(server.url),
        "--out",
        str(out),
        "--sandbox",
        "read-only",
        cwd=tmp_path,
        home=home,
    )
    assert result.returncode == 0, result.stderr
    [row] = rows_of(out)
    events = [json.loads(line) for line in Path(row.session_log).read_text().splitlines()]
    [command] = [e for e in events if e["type"] == "tool.finished"]
    assert "Read-only file system" in command["output"], command["output"]
