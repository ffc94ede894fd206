"""Ids and typed outcomes in the protocol: events carry their turn's id, an interrupt is answered by
turn.aborted, tool.finished says ok | error | denied, error classes are a closed set; real sessions and the
real `keel run` against the scripted server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import get_args

import pytest
from keel_cli import git_repo, run_streamed
from session_support import collect

from keel.agent.core.protocol import (
    AnyEvent,
    Compact,
    ErrorClass,
    Interrupt,
    TaskFinished,
    ToolStarted,
    TurnAborted,
    TurnStarted,
    UserPrompt,
)
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", {"notes.txt": "one\ntwo\n"})


def settings(url: str, repo: Path) -> SessionSettings:
    return SessionSettings(cwd=repo, model="openai/any", api_base=url, checkpoints=False)


def call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


def test_interrupt_is_answered_by_turn_aborted_with_the_turn_id(scripted_server, repo):
    server = scripted_server([call("run_command", command="sleep 30"), Reply(text="back")])
    prompt = UserPrompt(text="wait a while")

    async def drive() -> tuple[list[AnyEvent], list[AnyEvent]]:
        async with Session(settings(server.url, repo)) as session:

            def interrupt(event: AnyEvent) -> None:
                if isinstance(event, ToolStarted):
                    session.submit(Interrupt())

            session.submit(prompt)
            first = await collect(session, TaskFinished, interrupt)
            session.submit(UserPrompt(text="go on", id="second-turn"))
            return first, await collect(session, TaskFinished)

    first, second = asyncio.run(drive())
    turn = first[first.index(next(e for e in first if isinstance(e, TurnStarted))) :]
    assert {e.turn_id for e in turn} == {prompt.id}
    assert [e.type for e in turn[-2:]] == ["turn.aborted", "session.finished"]
    aborted = turn[-2]
    assert isinstance(aborted, TurnAborted) and aborted.reason == "interrupted"
    assert turn[-1].status == "interrupted"  # type: ignore[union-attr]
    assert {e.turn_id for e in second} == {"second-turn"}
    assert second[-1].status == "completed"  # type: ignore[union-attr]


def test_queued_turns_are_aborted_by_their_own_ids(scripted_server, repo):
    def slow_summaries(request: ChatRequest) -> Reply:
        return Reply(text="a summary", delay=30)

    server = scripted_server(slow_summaries)
    queued = UserPrompt(text="never runs")
    compact = Compact()

    async def drive() -> list[AnyEvent]:
        async with Session(settings(server.url, repo)) as session:
            session.submit(queued)
            session.submit(Interrupt())  # nothing runs yet: the queued prompt is dropped
            session.submit(compact)

            def interrupt(event: AnyEvent) -> None:
                if isinstance(event, TurnStarted):
                    asyncio.get_running_loop().call_later(0.2, session.submit, Interrupt())

            return await collect(session, TurnAborted, interrupt) + await collect(
                session, TurnAborted, interrupt
            )

    seen = asyncio.run(drive())
    aborted = [(e.turn_id, e.type) for e in seen if e.type in ("turn.aborted", "session.finished")]
    assert aborted == [
        (queued.id, "turn.aborted"),
        (queued.id, "session.finished"),
        (compact.id, "turn.aborted"),
    ]


def test_tool_finished_says_ok_error_or_denied(scripted_server, repo, tmp_path):
    server = scripted_server(
        [
            call("read_file", path="notes.txt"),
            call("read_file", path="missing.txt"),
            call("write_file", path="new.txt", content="x\n"),
            call("run_command", command="echo Denied"),  # output that looks like a denial
            Reply(text="done"),
        ]
    )
    result = run_streamed(
        server.url, "--approval", "auto-edit", "try things", cwd=repo, home=tmp_path / "home"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    finished = [e for e in result.events if e["type"] == "tool.finished"]
    assert [(e["name"], e["status"], e["ok"]) for e in finished] == [
        ("read_file", "ok", True),
        ("read_file", "error", False),
        ("write_file", "ok", True),
        ("run_command", "denied", False),  # auto-edit asks for commands; headless, nobody answers
    ]
    turn = result.events[1]["turn_id"]
    assert turn and all(e["turn_id"] == turn for e in result.events[1:])


def test_a_denial_by_the_person_is_denied_and_a_failing_command_that_prints_denied_is_not(
    scripted_server, repo
):
    from keel.agent.core.protocol import ApprovalRequested, Approve, ToolFinished

    server = scripted_server(
        [call("run_command", command="echo Denied; exit 1"), call("run_command", command="echo x")]
    )
    answers = iter(["allow_once", "deny"])

    async def drive() -> list[AnyEvent]:
        config = settings(server.url, repo).model_copy(
            update={"approval": "auto-edit", "interactive": True}
        )
        async with Session(config) as session:

            def answer(event: AnyEvent) -> None:
                if isinstance(event, ApprovalRequested):
                    session.submit(Approve(call_id=event.call_id, decision=next(answers)))

            session.submit(UserPrompt(text="run"))
            return await collect(session, TaskFinished, answer)

    seen = asyncio.run(drive())
    finished = [e for e in seen if isinstance(e, ToolFinished)]
    assert [(e.status, e.output.startswith("Denied")) for e in finished] == [
        ("error", True),  # the output's first word no longer decides
        ("denied", True),
    ]


def test_error_classes_are_a_closed_set(scripted_server, repo, tmp_path):
    server = scripted_server([Reply(error=401, error_message="bad key")])
    result = run_streamed(server.url, "hello", cwd=repo, home=tmp_path / "home")
    assert result.returncode == 1
    errors = [e for e in result.events if e["type"] == "error"]
    assert [e["error_class"] for e in errors] == ["AuthenticationError"]
    assert {"AuthenticationError", "InternalError", "ProviderError"} <= set(get_args(ErrorClass))
