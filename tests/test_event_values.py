"""Events are values built once: frozen, with their envelope (id, turn, time) set where they are made; what the
fold derives (usage totals) is added from the session's state as the event is published, and a tool call's
`ok` is derived from its status."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import get_args

import pytest
from keel_cli import git_repo
from pydantic import ValidationError
from session_support import until_finished

from keel.agent.core.fold import apply
from keel.agent.core.protocol import (
    RUNNING_TURN,
    AnyEvent,
    AssistantMessage,
    BudgetUpdated,
    TaskFinished,
    TokenUsage,
    ToolFinished,
    UserPrompt,
    parse_event,
)
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.core.state import SessionState
from keel.agent.core.store import read_events
from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

EVENT_CLASSES = get_args(get_args(AnyEvent)[0])


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda cls: cls.__name__)
def test_an_event_cannot_be_changed_after_it_is_built(cls: type) -> None:
    event = cls.model_construct()
    for name in ("turn_id", "ts", "type"):
        with pytest.raises(ValidationError, match="frozen"):
            setattr(event, name, getattr(event, name, None))


def test_usage_cannot_be_changed_inside_an_event() -> None:
    reply = AssistantMessage(text="hi", usage=TokenUsage(total_tokens=3))
    with pytest.raises(ValidationError, match="frozen"):
        reply.usage.total_tokens = 4  # type: ignore[misc]


def test_each_event_has_its_own_id() -> None:
    first, second = BudgetUpdated(used=1, budget=None), BudgetUpdated(used=1, budget=None)
    assert first.id and second.id and first.id != second.id
    assert first.turn_id == ""  # made outside any turn


def test_a_tool_call_is_ok_by_its_status_and_older_lines_still_read() -> None:
    denied = ToolFinished(call_id="c", name="run_command", output="no", status="denied")
    assert not denied.ok and json.loads(denied.model_dump_json())["ok"] is False
    old = parse_event('{"type":"tool.finished","call_id":"c","name":"x","ok":false,"output":""}')
    assert isinstance(old, ToolFinished) and old.status == "error" and not old.ok
    both = '{"type":"tool.finished","call_id":"c","name":"x","ok":true,"status":"unchanged","output":""}'
    assert parse_event(both).status == "unchanged"  # type: ignore[union-attr]
    totals = '{"type":"budget.updated","used":5,"budget":null,"task_usage":{"total_tokens":5}}'
    assert parse_event(totals).type == "budget.updated"


def test_published_totals_are_the_fold_of_the_log_up_to_the_event(
    scripted_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", {"notes.txt": "one\n"})
    read = Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "notes.txt"})])
    server = scripted_server([read, "It says one."])
    config = SessionSettings(
        cwd=repo, model="openai/any", api_base=server.url, retry_base_delay=0.01
    )

    async def run() -> tuple[list[AnyEvent], Path]:
        async with Session(config) as session:
            prompt = UserPrompt(text="what do the notes say?")
            session.submit(prompt)
            seen = await until_finished(session)
            start = next(i for i, e in enumerate(seen) if e.type == "turn.started")
            assert {e.turn_id for e in seen[:start]} == {""}  # session.started
            assert {e.turn_id for e in seen[start:]} == {prompt.id}  # made in the turn, not stamped
        return seen, session.log.path

    seen, log = asyncio.run(run())
    end = seen[-1]
    assert isinstance(end, TaskFinished) and end.session_usage.total_tokens > 0
    assert end.task_usage == end.session_usage == end.usage
    logged = read_events(log)
    assert [e.id for e in logged] == [e.id for e in seen if e.type != "assistant.delta"]
    state = SessionState(session_id="")
    with_totals = 0
    for event in logged:
        state = apply(state, event)
        if isinstance(event, AssistantMessage | BudgetUpdated | TaskFinished):
            assert (event.task_usage, event.session_usage) == (state.task_usage, state.usage)
            with_totals += 1
    assert with_totals >= 5  # two replies, their budget.updated, the end
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["ok"] for line in lines if line["type"] == "tool.finished"] == [True]


async def test_a_session_started_inside_another_turn_makes_its_own_turn_ids(
    scripted_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child session started while a parent's turn runs: its events carry its own turns, not the parent's."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", {"notes.txt": "one\n"})
    server = scripted_server(["It says one."])
    config = SessionSettings(cwd=repo, model="openai/any", api_base=server.url)
    RUNNING_TURN.set("the-parent-turn")  # this test's task only
    async with Session(config) as child:
        prompt = UserPrompt(text="what do the notes say?")
        child.submit(prompt)
        seen = await until_finished(child)
    assert seen[0].type == "session.started" and seen[0].turn_id == ""
    assert {e.turn_id for e in seen[1:]} == {prompt.id}
