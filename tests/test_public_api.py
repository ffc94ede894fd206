"""`import keel`: cheap to import, and enough to run a task the way `keel run` does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from keel_cli import git_repo

import keel
from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall


def test_importing_keel_loads_nothing_heavy():
    probe = "import sys, keel; print(sorted(m for m in ('pydantic', 'litellm', 'textual') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_public_names_are_the_core_s_own():
    assert keel.Session.__module__ == "keel.agent.core.session"
    assert keel.protocol.UserPrompt.__name__ == "UserPrompt"
    assert set(keel.__all__) >= {"Session", "protocol", "run_task", "session_settings"}
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        keel.nothing  # noqa: B018


async def test_run_task_drives_a_session_to_its_end(scripted_server, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", {"notes.txt": "alpha\n"})
    server = scripted_server(
        [
            Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "notes.txt"})]),
            Reply(text="It says alpha."),
        ]
    )
    settings = keel.session_settings(repo, model="openai/any", api_base=server.url)
    seen: list[str] = []
    finished = await keel.run_task(
        "What does notes.txt say?", settings, on_event=lambda e: seen.append(e.type)
    )
    assert (finished.status, finished.final_message) == ("completed", "It says alpha.")
    assert (
        seen[0] == "session.started" and seen[-1] == "session.finished" and "tool.finished" in seen
    )
    tool_results = [m["content"] for m in server.requests[-1].messages if m["role"] == "tool"]
    assert len(tool_results) == 1 and "alpha" in tool_results[0]
