"""MCP servers are processes keel starts: they run in the session's sandbox (read-only under
`--approval read-only`), with an environment without keel's secrets."""

from __future__ import annotations

from pathlib import Path

from keel_cli import git_repo, run_streamed

from keel.agent.testing.scripted_server import Reply

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
