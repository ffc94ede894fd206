"""`keel batch` runs a task's setup and test commands in the sandbox, as run_command runs one: they
write their worktree but nothing outside it, and never see keel's API key (a test command runs
after the model changed the worktree, so it runs whatever the model planted: a conftest.py, say)."""

from __future__ import annotations

import json
from pathlib import Path

from keel_cli import git_repo, run_keel
from sec_jail_support import jail

from keel.agent.harness.testing.scripted_server import Reply

__all__ = ["jail"]  # the fixture, imported for pytest to find

SECRET = "sk-batch-secret-4242"


def test_setup_and_test_commands_are_confined(jail, scripted_server, tmp_path: Path):
    repo = git_repo(tmp_path / "repo", {"calc.py": "x = 1\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    server = scripted_server([Reply(text="done")])
    setup = (
        f"env; echo pwned > {outside}/from-setup; echo made > made.txt && "
        "cat made.txt && echo SETUP-RAN"
    )
    test = f"env; echo pwned > {outside}/from-test; echo TEST-RAN"
    task = {"id": "t0", "prompt": "task t0", "repo": str(repo), "setup": [setup], "test": test}
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(task) + "\n")
    out = tmp_path / "out"
    result = run_keel(
        "batch",
        str(tasks),
        "--model",
        "openai/any",
        "--api-base",
        server.url,
        "--out",
        str(out),
        cwd=tmp_path,
        home=tmp_path / "home",
        OPENAI_API_KEY=SECRET,
    )
    assert result.returncode == 0, result.stderr
    [row] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    logs = {path.name: path.read_text() for path in (out / "logs").glob("*.log")}
    setup_log = next(text for name, text in logs.items() if name.endswith(".setup.log"))
    test_log = next(text for name, text in logs.items() if name.endswith(".test.log"))
    assert "made\nSETUP-RAN" in setup_log, setup_log  # the worktree stays writable
    assert "TEST-RAN" in test_log and row["pass"] is True, (row, test_log)
    assert SECRET not in setup_log and SECRET not in test_log
    assert "OPENAI_API_KEY" not in setup_log + test_log
    assert list(outside.iterdir()) == [], (setup_log, test_log)
