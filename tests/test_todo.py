"""The `todo` tool end to end: the scripted model writes its checklist; todo.updated carries it in stream-json,
the session log and the ATIF export, a resume folds it back, and a self-summary restates it to the model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from atif import Trajectory
from keel_cli import git_repo, run_keel, run_streamed
from session_support import until_finished

from keel.agent.core.protocol import Compact, ContextSummarized, TodoItem, UserPrompt
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.core.store import sessions_dir
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall
from keel.tools.registry import ToolRegistry
from keel.tools.todo import TodoTool

ITEMS = [
    {"content": "read calc.py", "status": "done"},
    {"content": "fix add()", "status": "in_progress"},
    {"content": "run the tests", "status": "pending"},
]
SUMMARY_MARK = "You are summarizing your own work"


def todo_call(items: list[dict[str, str]]) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="todo", arguments={"items": items})])


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a - b\n"})


def test_the_todo_schema_comes_from_its_args_model():
    schema = ToolRegistry([TodoTool()]).schema("todo")
    assert schema is not None
    items = schema["function"]["parameters"]["properties"]["items"]
    entry = items["items"]
    assert set(entry["properties"]) == {"content", "status"}
    assert entry["properties"]["status"]["enum"] == ["pending", "in_progress", "done"]


def test_a_todo_list_is_an_event_in_stream_json_the_log_and_atif_and_a_resume_keeps_it(
    scripted_server, repo, tmp_path
):
    server = scripted_server([todo_call(ITEMS), Reply(text="Working through the list.")])
    home = tmp_path / "home"
    run = run_streamed(server.url, "fix add() in calc.py", cwd=repo, home=home)
    assert run.returncode == 0, run.stderr[-2000:]
    [updated] = [e for e in run.events if e["type"] == "todo.updated"]
    assert updated["items"] == ITEMS
    finished = next(e for e in run.events if e["type"] == "tool.finished")
    assert finished["status"] == "ok" and "1 of 3 items done" in finished["output"]
    assert "[~] fix add()" in finished["output"]
    assert run.types().index("todo.updated") > run.types().index("tool.finished")

    session_id = run.events[0]["session_id"]
    log = sessions_dir() / f"{session_id}.jsonl"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["items"] for e in logged if e["type"] == "todo.updated"] == [ITEMS]

    resumed = Session(
        SessionSettings(cwd=repo, model="openai/any", api_base=server.url), resume=log
    )
    assert resumed.state.todo == tuple(TodoItem.model_validate(item) for item in ITEMS)
    asyncio.run(resumed.close())

    export = run_keel("export", session_id, "--format", "atif", cwd=repo, home=home)
    assert export.returncode == 0, export.stderr
    trajectory = Trajectory.model_validate_json(export.stdout.splitlines()[0])
    [step] = [s for s in trajectory.steps if (s.extra or {}).get("keel_event") == "todo.updated"]
    assert step.source == "system" and step.extra is not None
    assert step.extra["items"] == ITEMS
    assert "[x] read calc.py" in (step.message or "")


def test_a_todo_call_the_tool_refuses_records_no_list(scripted_server, repo, tmp_path):
    bad = [{"content": "x", "status": "someday"}]
    server = scripted_server([todo_call(bad), Reply(text="ok")])
    run = run_streamed(server.url, "plan it", cwd=repo, home=tmp_path / "home")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "todo.updated" not in run.types()
    finished = next(e for e in run.events if e["type"] == "tool.finished")
    assert finished["status"] == "error" and "status" in finished["output"]


def test_after_a_self_summary_the_todo_list_is_restated_to_the_model(scripted_server, repo):
    def model(request: ChatRequest) -> Reply:
        if SUMMARY_MARK in str(request.messages[0].get("content")):
            return Reply(text="## Done so far\nRead calc.py.")
        if len(request.messages) <= 3:  # the system prompt, the task, the status line
            return todo_call(ITEMS)
        return Reply(text="noted")

    server = scripted_server(model)

    async def live() -> None:
        settings = SessionSettings(
            cwd=repo, model="openai/any", api_base=server.url, checkpoints=False
        )
        async with Session(settings) as session:
            session.submit(UserPrompt(text="fix add() in calc.py"))
            await until_finished(session)
            session.submit(Compact())
            async for event in session.events():
                if isinstance(event, ContextSummarized):
                    break
            session.submit(UserPrompt(text="go on"))
            await until_finished(session)

    asyncio.run(live())
    after = server.requests[-1].messages
    block = next(m["content"] for m in after if "<summary>" in str(m.get("content")))
    assert "<todo>" in block
    assert "[x] read calc.py\n[~] fix add()\n[ ] run the tests" in block
