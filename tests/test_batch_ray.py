"""`keel batch --backend ray` on a local Ray: the same batch as the local backend, the same results."""

from __future__ import annotations

import importlib.util

import pytest
from batch_support import FILES, FIXES, Agent, check_batch_outcome, run_batch, snapshot, write_tasks
from keel_cli import git_repo

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed"),
]


def test_eight_tasks_two_attempts_on_a_local_ray(scripted_server, tmp_path):
    server = scripted_server(Agent())
    repo = git_repo(tmp_path / "repo", FILES)
    before = snapshot(repo)
    tasks = write_tasks(tmp_path / "tasks.jsonl", list(FIXES), repo)
    out, home = tmp_path / "out", tmp_path / "home"
    result = run_batch(
        str(tasks),
        "--model",
        "openai/any",
        "--api-base",
        server.url,
        "--backend",
        "ray",
        "-j",
        "4",
        "--attempts",
        "2",
        "--out",
        str(out),
        cwd=tmp_path,
        home=home,
        timeout=280,
    )
    rows = check_batch_outcome(result, repo, out, home, before)
    # two model calls per attempt; the workers wrote their session logs under the driver's KEEL_HOME
    assert len(server.requests) == 32 and all(row.session_log.startswith(str(home)) for row in rows)
