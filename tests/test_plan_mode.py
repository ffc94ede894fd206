"""Plan mode end to end: `keel run --plan` runs only the read tools, refuses writes and commands with a message
the model reads, prints the plan and exits 0 with no file changed; the mode is an event a resume keeps, and a
resumed run without --plan carries the plan out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from keel_cli import git_repo, run_keel, run_streamed

from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.core.store import sessions_dir
from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
PLAN = "Plan:\n1. In calc.py, make add() return a + b.\n2. Run the tests."


def call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "repo", {"calc.py": CALC})


def test_keel_run_plan_refuses_writes_and_commands_and_prints_the_plan(
    scripted_server, repo, tmp_path
):
    server = scripted_server(
        [
            call("read_file", path="calc.py"),
            call("write_file", path="calc.py", content=FIXED),
            call("run_command", command="touch marker"),
            Reply(text=PLAN),
        ]
    )
    home = tmp_path / "home"
    run = run_keel(
        "run", "--model", "openai/any", "--api-base", server.url, "--plan", "fix add()",
        cwd=repo, home=home,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == PLAN
    assert "plan mode on" in run.stderr
    assert (repo / "calc.py").read_text() == CALC
    assert not (repo / "marker").exists()

    results = [m for m in server.requests[-1].messages if m["role"] == "tool"]
    assert "return a - b" in results[0]["content"]
    for refused, name in zip(results[1:], ("write_file", "run_command"), strict=True):
        assert f"{name} was not run: this session is in plan mode" in refused["content"]
    told = [m["content"] for m in server.requests[0].messages if m["role"] == "user"]
    assert any("switched this session to plan mode" in text for text in told)

    log = next((home / "sessions").glob("*.jsonl"))
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["active"] for e in events if e["type"] == "plan_mode.changed"] == [True]
    statuses = [e["status"] for e in events if e["type"] == "tool.finished"]
    assert statuses == ["ok", "denied", "denied"]
    assert events[-1]["type"] == "session.finished" and events[-1]["status"] == "completed"


def test_plan_mode_survives_a_resume_and_a_run_without_plan_carries_it_out(
    scripted_server, repo, tmp_path, monkeypatch
):
    server = scripted_server(
        [
            Reply(text=PLAN),
            call("read_file", path="calc.py"),
            call("write_file", path="calc.py", content=FIXED),
            Reply(text="Done."),
        ]
    )
    home = tmp_path / "home"
    first = run_streamed(server.url, "--plan", "fix add()", cwd=repo, home=home)
    assert first.returncode == 0, first.stderr[-2000:]
    assert [e["active"] for e in first.events if e["type"] == "plan_mode.changed"] == [True]
    session_id = first.events[0]["session_id"]

    monkeypatch.setenv("KEEL_HOME", str(home))
    log = sessions_dir() / f"{session_id}.jsonl"
    resumed = Session(
        SessionSettings(cwd=repo, model="openai/any", api_base=server.url), resume=log
    )
    assert resumed.state.plan_mode
    asyncio.run(resumed.close())

    second = run_streamed(server.url, "--resume", session_id, "go ahead", cwd=repo, home=home)
    assert second.returncode == 0, second.stderr[-2000:]
    assert [e["active"] for e in second.events if e["type"] == "plan_mode.changed"] == [False]
    finished = [e["status"] for e in second.events if e["type"] == "tool.finished"]
    assert finished == ["ok", "ok"]
    assert (repo / "calc.py").read_text() == FIXED
    told = [m["content"] for m in server.requests[-1].messages if m["role"] == "user"]
    assert any("plan mode is over" in text for text in told)


def test_keel_run_help_describes_plan(tmp_path):
    result = run_keel("run", "--help", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 0
    assert "--plan" in result.stdout and "plan mode" in result.stdout
