"""How a task ends, as small models exercise it (issue 15's eight behaviours): a Session against the scripted
server over real HTTP, in a real git repo, its log read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from keel_cli import git_repo
from session_support import until_finished

from keel.agent.config import KeelConfig
from keel.agent.protocol import (
    UserMessage,
    UserPrompt,
)
from keel.agent.session import Session
from keel.agent.settings import SessionSettings, settings_from_config
from keel.agent.store import read_events
from keel.agent.testing.scripted_server import Reply, ScriptedToolCall

SMALL = "openai/qwen2.5-coder-1.5b-instruct"  # small by its name, served from 127.0.0.1
CAPABLE = "openai/any"
CALC = {"calc.py": "def add(a, b):\n    return a - b\n"}
FIX = {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", CALC)


def settings(server, workspace: Path, model: str = SMALL, **config) -> SessionSettings:
    chosen = KeelConfig(model=model, api_base=server.url, retry_base_delay=0.01, **config)
    return settings_from_config(chosen, workspace, interactive=False)


def call(name: str, **arguments) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


async def run(session_settings: SessionSettings, prompt: str) -> list:
    async with Session(session_settings) as session:
        session.submit(UserPrompt(text=prompt))
        events = await until_finished(session)
        log = read_events(session.log.path)
    assert [e.type for e in log if e.type != "assistant.delta"] == [
        e.type for e in events if e.type != "assistant.delta"
    ], "every event the session published is in its log"
    return events


def keel_messages(events: list, purpose: str) -> list[str]:
    return [e.text for e in events if isinstance(e, UserMessage) and e.purpose == purpose]


# ------------------------------------------------ 1. a reply without a call is not always the end


async def test_a_made_up_success_on_a_change_task_gets_one_nudge(scripted_server, workspace):
    server = scripted_server(
        [
            Reply(text="I fixed the `add` function."),  # nothing was changed
            call("edit_file", **FIX),
            Reply(text="Fixed: add() now adds."),
        ]
    )
    events = await run(settings(server, workspace), "add() is broken")
    assert events[-1].status == "completed" and events[-1].final_message == "Fixed: add() now adds."
    assert "No file has changed yet" in server.requests[1].last_text("user")
    assert len(keel_messages(events, "nudge")) == 1
    assert "return a + b" in (workspace / "calc.py").read_text()


async def test_the_nudge_comes_once_and_the_next_answer_ends_the_task(scripted_server, workspace):
    server = scripted_server([Reply(text="Done."), Reply(text="No change is needed: it is right.")])
    events = await run(settings(server, workspace), "fix the add function")
    assert events[-1].final_message == "No change is needed: it is right."
    assert len(keel_messages(events, "nudge")) == 1 and len(server.requests) == 2


@pytest.mark.parametrize(
    ("model", "prompt"),
    [
        (SMALL, "what does calc.py do?"),  # a question asks for no change
        (CAPABLE, "fix the add function"),  # a capable model is taken at its word
    ],
)
async def test_no_nudge_for_a_question_or_a_capable_model(
    scripted_server, workspace, model, prompt
):
    server = scripted_server([Reply(text="It subtracts.")])
    events = await run(settings(server, workspace, model), prompt)
    assert events[-1].final_message == "It subtracts." and len(server.requests) == 1
    assert keel_messages(events, "nudge") == []


async def test_the_nudge_can_be_turned_off_or_on_for_every_model(scripted_server, workspace):
    server = scripted_server([Reply(text="Done.")])
    off = settings(server, workspace, loop={"nudge_without_change": "never"})
    assert keel_messages(await run(off, "fix add"), "nudge") == []
    server = scripted_server([Reply(text="Done."), Reply(text="Really done.")])
    always = settings(server, workspace, CAPABLE, loop={"nudge_without_change": "always"})
    assert len(keel_messages(await run(always, "fix add"), "nudge")) == 1


# ------------------------------------------------ 2. a failed attempt at a call gets a correction


@pytest.mark.parametrize(
    ("attempt", "says"),
    [
        (  # a Python docstring inside JSON
            (
                '```json\n{"name": "edit_file", "arguments": {"path": "calc.py", "old_string": '
                '"""return a - b""", "new_string": "return a + b"}}\n```'
            ),
            "triple-quoted",
        ),
        (  # a stray parenthesis
            (
                '{"name": "edit_file", "arguments": {"path": "calc.py", "old_string": "return a - b"),'
                ' "new_string": "return a + b"}}'
            ),
            "not valid JSON",
        ),
        ("```edit_file\ncalc.py: return a - b -> return a + b\n```", "labelled edit_file"),
        ('edit_file(path="calc.py", old_string="return a - b")', "written as code"),
    ],
)
@pytest.mark.parametrize("protocol", ["native", "text"])
async def test_a_failed_attempt_at_a_call_is_corrected_not_taken_as_the_answer(
    scripted_server, workspace, attempt, says, protocol
):
    server = scripted_server([Reply(text=attempt), call("edit_file", **FIX), Reply(text="ok")])
    if protocol == "text":
        tagged = f"<tool_call>{json.dumps({'name': 'edit_file', 'arguments': FIX})}</tool_call>"
        server = scripted_server([Reply(text=attempt), Reply(text=tagged), Reply(text="ok")])
    chosen = settings(server, workspace, CAPABLE, tool_protocol=protocol)
    events = await run(chosen, "make add add")
    assert events[-1].status == "completed" and events[-1].final_message == "ok"
    assert "return a + b" in (workspace / "calc.py").read_text()
    corrections = keel_messages(events, "correction")
    assert len(corrections) == 1 and says in corrections[0], corrections
    assert '"name": "edit_file"' in corrections[0]  # shows how to send the call it tried


async def test_a_call_cut_off_by_the_length_limit_is_corrected(scripted_server, workspace):
    cut = Reply(
        text='{"name": "write_file", "arguments": {"path": "big.py", "con', finish_reason="length"
    )
    server = scripted_server([cut, Reply(text="gave up")])
    events = await run(settings(server, workspace, CAPABLE), "write big.py")
    assert events[-1].final_message == "gave up"
    assert "length limit" in keel_messages(events, "correction")[0]


async def test_a_cut_off_call_is_not_completed_by_guessing_its_end(scripted_server, workspace):
    cut = Reply(
        text='{"name": "write_file", "arguments": {"path": "calc.py", "content": "def add(a, b',
        finish_reason="length",
    )  # closing it with '"}}' would read as a call that writes half a file
    server = scripted_server([cut, Reply(text="gave up")])
    events = await run(settings(server, workspace, CAPABLE), "rewrite calc.py")
    assert events[-1].final_message == "gave up"
    assert (workspace / "calc.py").read_text() == CALC["calc.py"]
    assert "length limit" in keel_messages(events, "correction")[0]


async def test_corrections_in_a_row_end_the_task_as_an_error(scripted_server, workspace):
    broken = Reply(text='{"name": "read_file", "arguments": {"path": calc.py}}')
    server = scripted_server([broken] * 10)
    events = await run(settings(server, workspace, CAPABLE), "read calc.py")
    assert events[-1].status == "error" and "could not be run" in events[-1].reason
    assert len(keel_messages(events, "correction")) == 3 and len(server.requests) == 4


async def test_prose_that_mentions_a_tool_is_an_answer(scripted_server, workspace):
    server = scripted_server(
        [Reply(text="I used edit_file to change `calc.py`; run it with python.")]
    )
    events = await run(settings(server, workspace, CAPABLE), "what did you do?")
    assert events[-1].status == "completed" and len(server.requests) == 1
    assert keel_messages(events, "correction") == []
