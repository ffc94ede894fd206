"""keel batch saves an attempt with the git metadata it recorded, not with the config of whatever repository the
worktree's `.git` file names after the model ran (here rewritten by an unconfined command)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from keel_cli import git_repo, run_keel

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall


def test_a_rewritten_worktree_git_file_runs_nothing_after_the_attempt(scripted_server, tmp_path):
    marker = tmp_path / "marker"
    repo = git_repo(tmp_path / "repo", {"calc.py": "x = 1\n"})
    evil = tmp_path / "evil"
    hijack = (
        f"git init -q {evil} && "
        f"git -C {evil} config filter.evil.clean 'env >> {marker}; cat' && "
        f"git -C {evil} config core.fsmonitor 'env >> {marker}; true' && "
        "printf '* filter=evil\\n' > .gitattributes && "
        f"printf 'gitdir: {evil}/.git\\n' > .git && echo changed > calc.py"
    )
    server = scripted_server(
        [
            Reply(tool_calls=[ScriptedToolCall(name="run_command", arguments={"command": hijack})]),
            Reply(text="done"),
        ]
    )
    tasks = tmp_path / "tasks.jsonl"
    task = {"id": "t0", "prompt": "task t0", "repo": str(repo), "test": "true"}
    tasks.write_text(json.dumps(task) + "\n")
    out, home = tmp_path / "out", tmp_path / "home"
    result = run_keel(
        "batch",
        str(tasks),
        "--model",
        "openai/any",
        "--api-base",
        server.url,
        "--sandbox",
        "full-access",
        "--out",
        str(out),
        cwd=tmp_path,
        home=home,
        OPENAI_API_KEY="sk-secret",
    )
    assert not marker.exists(), marker.read_text()
    assert result.returncode == 0, result.stderr
    [row] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["branch"], row
    shown = subprocess.run(
        ["git", "show", f"{row['branch']}:calc.py"],
        check=False,
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert shown.stdout == "changed\n", shown.stderr
    assert Path(row["patch"]).is_file()
