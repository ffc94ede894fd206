"""The Session API: interrupts, approvals, the tools-unsupported fallback, resume; real litellm, scripted server."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from keel_cli import git_repo
from process_support import processes_in
from session_support import until_finished

from keel.agent.core.protocol import (
    ApprovalRequested,
    Approve,
    AssistantDelta,
    Interrupt,
    ToolFinished,
    ToolStarted,
    UserPrompt,
)
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.core.store import claim_new_log, read_events
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", {"notes.txt": "one\ntwo\n"})


def settings(server, workspace: Path, **overrides) -> SessionSettings:
    return SessionSettings(
        cwd=workspace, model="openai/any", api_base=server.url, retry_base_delay=0.01, **overrides
    )


def command_call(command: str) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="run_command", arguments={"command": command})])


def valid_tool_history(messages: list[dict]) -> bool:
    """Every assistant tool call is answered by a tool message before the next assistant message."""
    pending: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            if pending:
                return False
            pending = {c["id"] for c in message.get("tool_calls") or []}
        elif message["role"] == "tool":
            pending.discard(message["tool_call_id"])
    return not pending


async def test_interrupt_stops_a_streaming_reply_and_the_next_turn_continues(
    scripted_server, workspace
):
    long_reply = "word " * 400  # 250 chunks, 20 ms apart
    server = scripted_server([Reply(text=long_reply, chunk_delay=0.02), Reply(text="Back again.")])
    async with Session(settings(server, workspace)) as session:
        session.submit(UserPrompt(text="write a lot"))
        interrupted: list[AssistantDelta] = []

        def interrupt_on_first_delta(event) -> None:
            if isinstance(event, AssistantDelta) and not interrupted:
                interrupted.append(event)
                session.submit(Interrupt())

        seen = await until_finished(session, interrupt_on_first_delta)
        assert seen[-1].status == "interrupted"
        streamed = "".join(e.text for e in seen if isinstance(e, AssistantDelta))
        assert long_reply.startswith(streamed) and len(streamed) < len(long_reply)  # cut short

        session.submit(UserPrompt(text="go on"))
        seen = await until_finished(session)
    assert seen[-1].status == "completed" and seen[-1].final_message == "Back again."
    messages = server.requests[-1].messages
    assert valid_tool_history(messages)
    assert any("interrupted" in str(m["content"]) for m in messages)


async def test_interrupt_kills_a_running_command(scripted_server, workspace):
    server = scripted_server([command_call("echo started; sleep 600"), Reply(text="ok")])
    async with Session(settings(server, workspace)) as session:
        session.submit(UserPrompt(text="wait"))

        def interrupt_when_running(event) -> None:
            if isinstance(event, ToolStarted):
                asyncio.get_running_loop().call_later(0.5, session.submit, Interrupt())

        # ended by the interrupt, not by the command (which sleeps far beyond this bound)
        seen = await asyncio.wait_for(until_finished(session, interrupt_when_running), 120)
        assert seen[-1].status == "interrupted"
        assert processes_in(workspace) == []
        session.submit(UserPrompt(text="and now?"))
        await until_finished(session)
    messages = server.requests[-1].messages
    assert valid_tool_history(messages)
    assert any(m["role"] == "tool" and "Interrupted" in m["content"] for m in messages)


async def test_approvals_ask_a_person_under_auto_edit(scripted_server, workspace):
    server = scripted_server(
        [
            command_call("echo denied > denied.txt"),
            command_call("echo once > once.txt"),
            command_call("echo session > session.txt"),
            command_call("echo again > again.txt"),
            Reply(text="done"),
        ]
    )
    decisions = iter(["deny", "allow_once", "allow_session"])
    asked: list[str] = []
    async with Session(
        settings(server, workspace, approval="auto-edit", interactive=True)
    ) as session:

        def answer(event) -> None:
            if isinstance(event, ApprovalRequested):
                asked.append(event.arguments["command"])
                session.submit(Approve(call_id=event.call_id, decision=next(decisions)))

        session.submit(UserPrompt(text="write files"))
        seen = await until_finished(session, answer)
    assert len(asked) == 3  # the fourth command ran without asking: allowed for the session
    results = [e for e in seen if isinstance(e, ToolFinished)]
    assert not results[0].ok and "did not approve" in results[0].output
    assert not (workspace / "denied.txt").exists()
    assert (workspace / "once.txt").exists() and (workspace / "again.txt").exists()


async def test_policies_without_a_person(scripted_server, workspace):
    edit = Reply(
        tool_calls=[
            ScriptedToolCall(name="write_file", arguments={"path": "new.txt", "content": "x\n"})
        ]
    )
    server = scripted_server([edit, command_call("touch ran.txt"), Reply(text="done")])
    async with Session(settings(server, workspace, approval="read-only")) as session:
        session.submit(UserPrompt(text="try"))
        seen = await until_finished(session)
    outputs = [e.output for e in seen if isinstance(e, ToolFinished)]
    assert "read-only" in outputs[0] and "read-only" in outputs[1]
    assert not (workspace / "new.txt").exists() and not (workspace / "ran.txt").exists()

    server = scripted_server([edit, command_call("touch ran.txt"), Reply(text="done")])
    async with Session(settings(server, workspace, approval="auto-edit")) as session:
        session.submit(UserPrompt(text="try"))
        seen = await until_finished(session)
    outputs = [e.output for e in seen if isinstance(e, ToolFinished)]
    assert (workspace / "new.txt").exists()
    assert "headless" in outputs[1] and not (workspace / "ran.txt").exists()


async def test_switches_to_the_text_protocol_when_tools_are_rejected(scripted_server, workspace):
    def provider(request: ChatRequest) -> Reply:
        if request.tools:
            return Reply(error=400, error_message="this model does not support tools")
        if "<tool_result name=" not in str(request.messages[1:]):
            return Reply(
                text='<tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>'
            )
        return Reply(text="The notes say one, two.")

    server = scripted_server(provider)
    async with Session(settings(server, workspace)) as session:
        session.submit(UserPrompt(text="read the notes"))
        seen = await until_finished(session)
    assert seen[-1].status == "completed" and seen[-1].final_message == "The notes say one, two."
    assert any(e.type == "error" and "text tool protocol" in e.message for e in seen)
    read = next(e for e in seen if isinstance(e, ToolFinished))
    assert read.ok and "two" in read.output


async def test_unreachable_provider_ends_the_task_with_an_error(workspace):
    dead = SessionSettings(
        cwd=workspace,
        model="openai/any",
        api_base="http://127.0.0.1:9/v1",
        retries=1,
        retry_base_delay=0.01,
    )
    async with Session(dead) as session:
        session.submit(UserPrompt(text="hello"))
        seen = await until_finished(session)
    assert seen[-1].status == "error"
    assert [e.type for e in seen].count("model.retry") == 1
    log = read_events(Path(os.environ["KEEL_HOME"]) / "sessions" / f"{session.id}.jsonl")
    assert log[-1].type == "session.finished"


async def test_interrupt_before_the_turn_starts_still_ends_it(scripted_server, workspace):
    server = scripted_server([Reply(text="never seen")])
    async with Session(settings(server, workspace)) as session:
        session.submit(UserPrompt(text="one"))
        session.submit(Interrupt())
        seen = await until_finished(session)
    assert seen[-1].status == "interrupted" and seen[-1].final_message == ""
    assert server.requests == []  # the prompt was dropped before it reached the model


async def test_closing_mid_turn_logs_how_the_turn_ended(scripted_server, workspace):
    server = scripted_server([Reply(text="slow " * 200, chunk_delay=0.05)])
    session = Session(settings(server, workspace))
    session.start()
    session.submit(UserPrompt(text="go"))
    async for event in session.events():
        if isinstance(event, AssistantDelta):
            break
    await session.close()
    log = read_events(Path(os.environ["KEEL_HOME"]) / "sessions" / f"{session.id}.jsonl")
    assert log[-1].type == "session.finished" and log[-1].status == "interrupted"


def test_a_new_session_never_takes_the_id_of_a_log_that_exists(tmp_path):
    """1,000 rollouts started in one second drew one id twice (bench/rollouts_scale.py: "session … is open in
    another keel process"); had the first ended, the second would have appended to its log."""
    ids = iter(["20261127-192521-7f0e8a", "20261127-192521-7f0e8a", "20261127-192521-0b1c2d"])
    first = claim_new_log(tmp_path, lambda: next(ids))
    first.write_text('{"type": "session.started"}\n')
    second = claim_new_log(tmp_path, lambda: next(ids))
    assert (first.stem, second.stem) == ("20261127-192521-7f0e8a", "20261127-192521-0b1c2d")
    assert first.read_text() == '{"type": "session.started"}\n' and second.read_text() == ""
