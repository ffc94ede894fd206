"""MCP servers are processes keel starts: they run in the session's sandbox (read-only under
`--approval read-only`), with an environment without keel's secrets."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from keel_cli import git_repo, run_streamed

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

SERVER = str(Path(__file__).parent.parent / "mcp_test_server.py")

SECRET = "sk-test-do-not-leak-4242"


def user_server(home: Path, script: str) -> None:
    """The person's own config (trusted) with one stdio server running `script`."""
    config = home / "config" / "keel" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[mcp_servers.probe]\ncommand = "sh"\nargs = ["-c", {script!r}]\nstartup_timeout_sec = 5\n'
    )


def test_an_mcp_server_writes_only_the_workspace_and_sees_no_secret(scripted_server, tmp_path):
    outside = tmp_path / "outside-marker"
    repo = git_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    home = tmp_path / "h"
    user_server(home, f"env > env.txt; touch {outside}")
    server = scripted_server([Reply(text="done")])
    result = run_streamed(server.url, "hi", cwd=repo, home=home, OPENAI_API_KEY=SECRET)
    assert result.returncode == 0, result.stderr
    dumped = (repo / "env.txt").read_text()  # it ran, in the workspace
    assert "PATH=" in dumped and SECRET not in dumped
    assert not outside.exists()


def test_under_read_only_approval_an_mcp_server_writes_nothing(scripted_server, tmp_path):
    outside = tmp_path / "outside-marker"
    repo = git_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    home = tmp_path / "h"
    user_server(home, f"touch {outside} inside.txt")
    server = scripted_server([Reply(text="done")])
    result = run_streamed(server.url, "--approval", "read-only", "hi", cwd=repo, home=home)
    assert result.returncode == 0, result.stderr
    assert not outside.exists()
    assert not (repo / "inside.txt").exists()


def running_with(text: str) -> list[str]:
    """Processes whose command line holds `text`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if proc.name.isdigit() and text in cmdline:
            found.append(proc.name)
    return found


def test_a_real_server_works_in_the_sandbox_and_ends_with_the_session(scripted_server, tmp_path):
    repo = git_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    calls = repo / "calls.jsonl"  # in the workspace: the sandbox lets it write there
    home = tmp_path / "h"
    config = home / "config" / "keel" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f"[mcp_servers.t]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(SERVER)}, {json.dumps(str(calls))}]\n"
    )
    call = ScriptedToolCall(name="mcp__t__add", arguments={"a": 2, "b": 3})
    server = scripted_server([Reply(tool_calls=[call]), Reply(text="five")])
    result = run_streamed(server.url, "add", cwd=repo, home=home, OPENAI_API_KEY=SECRET)
    assert result.returncode == 0, result.stderr
    [tool] = [e for e in result.events if e["type"] == "tool.finished"]
    assert tool["output"] == "the sum is 5"
    assert started_sandbox(result) == "bubblewrap" or "landlock" in started_sandbox(result)
    assert running_with(str(calls)) == []


def started_sandbox(result) -> str:
    return next(e["sandbox"] for e in result.events if e["type"] == "session.started")
