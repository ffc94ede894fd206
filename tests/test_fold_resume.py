"""Resuming folds the log the way the live session folded its events: usage after a summary, the tool
protocol, budgets, a crash mid-turn; real sessions and the real `keel run --resume` against the scripted server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from keel_cli import git_repo, run_streamed
from session_support import until_finished
from test_fold_property import served_usage

from keel.agent.core.context.budget import auto_budget
from keel.agent.core.fold import UNFINISHED_RESULT, fold
from keel.agent.core.protocol import (
    BudgetSet,
    Compact,
    ContextSummarized,
    Continue,
    SetBudget,
    TaskFinished,
    TokenUsage,
    ToolCall,
    UserPrompt,
    parse_event,
)
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.core.state import SessionState
from keel.agent.core.store import read_events, sessions_dir
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall

SUMMARY_MARK = "You are summarizing your own work"


def is_summary_request(request: ChatRequest) -> bool:
    return bool(request.messages) and SUMMARY_MARK in str(request.messages[0].get("content"))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", {"notes.txt": "one\ntwo\n" * 40})


def settings(url: str, repo: Path, **overrides: object) -> SessionSettings:
    return SessionSettings(
        cwd=repo, model="openai/any", api_base=url, checkpoints=False, **overrides
    )


def model(request: ChatRequest) -> Reply:
    """Reads notes.txt once per prompt, then answers; writes a summary when asked for one."""
    if is_summary_request(request):
        return Reply(text="## Done\nRead the notes; they repeat one and two.")
    if request.messages[-2].get("role") == "tool":  # the last message is the status line
        return Reply(text="They say one and two.")
    read = ScriptedToolCall(name="read_file", arguments={"path": "notes.txt"})
    return Reply(tool_calls=[read])


def test_prompt_compact_prompt_then_resume_keeps_session_usage(scripted_server, repo, tmp_path):
    """The issue's case: the summary call's tokens were lost on resume (live 2,670, resumed 1,920)."""
    server = scripted_server(model)

    async def live() -> tuple[TaskFinished, ContextSummarized, str]:
        async with Session(settings(server.url, repo)) as session:
            session.submit(UserPrompt(text="what do the notes say?"))
            await until_finished(session)
            session.submit(Compact())
            summarized = None
            async for event in session.events():
                if isinstance(event, ContextSummarized):
                    summarized = event
                    break
            session.submit(UserPrompt(text="and now?"))
            finished = (await until_finished(session))[-1]
        assert summarized is not None
        return finished, summarized, session.id

    finished, summarized, session_id = asyncio.run(live())
    assert finished.usage == served_usage(server.requests)  # the summary call counted, once
    assert summarized.usage.total_tokens > 0, "the summarization call carries its usage"
    assert finished.usage == finished.session_usage
    assert finished.usage.total_tokens > summarized.usage.total_tokens

    log = sessions_dir() / f"{session_id}.jsonl"
    rebuilt = Session(settings(server.url, repo), resume=log)
    assert rebuilt.state.usage == finished.usage
    assert rebuilt.state.steps == finished.steps
    asyncio.run(rebuilt.close())

    resumed = run_streamed(server.url, "--resume", session_id, cwd=repo, home=tmp_path / "home")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    calls = [e for e in resumed.events if e["type"] == "assistant.message"]
    expected = sum((TokenUsage.model_validate(c["usage"]) for c in calls), finished.usage)
    end = resumed.events[-1]
    assert end["usage"] == expected.model_dump()  # the resumed run counts on from the live total
    assert end["usage"] == served_usage(server.requests).model_dump()
    assert end["session_usage"] == end["usage"] == calls[-1]["session_usage"]


def test_the_text_tool_protocol_survives_a_resume(scripted_server, repo, tmp_path):
    def no_tools(request: ChatRequest) -> Reply:
        if request.tools:
            return Reply(error=400, error_message="this model does not support tools")
        return Reply(text="Fine without tools.")

    server = scripted_server(no_tools)
    first = run_streamed(server.url, "hello", cwd=repo, home=tmp_path / "home")
    assert first.returncode == 0, first.stderr[-2000:]
    assert "tool_protocol.changed" in first.types()
    asked = len(server.requests)

    resumed = run_streamed(
        server.url, "--resume", first.events[0]["session_id"], cwd=repo, home=tmp_path / "home"
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert resumed.events[0]["tool_protocol"] == "text"
    assert [r.tools for r in server.requests[asked:]] == [[]]  # no native tools, no second 400


def reads(request: ChatRequest) -> Reply:
    """Reads forever, each call a little different (the same call five times is a loop, stopped as one)."""
    arguments = {"path": "notes.txt", "limit": len(request.messages)}
    return Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments=arguments)])


def test_budgets_are_events_that_a_resume_keeps_and_extends(scripted_server, repo):
    server = scripted_server(reads)

    async def live() -> str:
        async with Session(settings(server.url, repo)) as session:
            session.submit(SetBudget(budget=4_000))
            session.submit(UserPrompt(text="read forever"))
            seen = await until_finished(session)
        assert seen[-1].status == "budget_exhausted"
        assert [e.budget for e in seen if isinstance(e, BudgetSet)] == [4_000]
        return session.id

    async def resumed(**overrides: object) -> SessionState:
        async with Session(settings(server.url, repo, **overrides), resume=log) as session:
            return session.state

    log = sessions_dir() / f"{asyncio.run(live())}.jsonl"
    used = fold(read_events(log), SessionState(session_id=log.stem)).task_tokens
    kept = asyncio.run(
        resumed()
    )  # a resume grants the session's /budget again, on top of what was used
    assert (kept.budget, kept.default_budget) == (used + 4_000, 4_000)
    granted = asyncio.run(resumed(budget=1_000))  # --budget N grants N
    assert (granted.budget, granted.default_budget) == (used + 1_000, 1_000)
    grants = [e for e in read_events(log) if isinstance(e, BudgetSet)]
    assert [(g.reason, g.budget) for g in grants] == [
        ("requested", 4_000),
        ("resume", used + 4_000),
        ("resume", used + 1_000),
    ]


def test_a_resume_without_a_budget_grants_a_fresh_estimate(scripted_server, repo, tmp_path):
    server = scripted_server(reads)
    stopped = run_streamed(server.url, "read forever", cwd=repo, home=tmp_path / "home")
    assert stopped.returncode == 3 and stopped.events[-1]["status"] == "budget_exhausted"
    estimate = auto_budget("read forever", 1)
    assert [e["budget"] for e in stopped.events if e["type"] == "budget.set"] == [estimate]
    used = stopped.events[-1]["task_usage"]["total_tokens"]
    finish = scripted_server(["Done reading."])
    resumed = run_streamed(
        finish.url, "--resume", stopped.events[0]["session_id"], cwd=repo, home=tmp_path / "home"
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    grant = next(e for e in resumed.events if e["type"] == "budget.set")
    assert grant["reason"] == "resume" and grant["budget"] == used + estimate


def test_a_turn_cut_off_by_a_crash_is_closed_on_resume(scripted_server, repo):
    """A log that ends after a tool call was asked for (the process died): the resume answers it."""
    server = scripted_server(["Picked it up again."])
    log = sessions_dir() / "20250101-000000-abcdef.jsonl"
    log.parent.mkdir(parents=True)
    call = ToolCall(id="call_abcdef_1", name="read_file", arguments='{"path": "notes.txt"}')
    lines = [
        {"type": "session.started", "session_id": log.stem, "model": "openai/any", "cwd": str(repo),
         "context_window": 32768, "tool_protocol": "native", "approval": "full-auto"},
        {"type": "turn.started", "turn_id": "t1", "kind": "task"},
        {"type": "user.message", "turn_id": "t1", "text": "read the notes"},
        {"type": "assistant.message", "turn_id": "t1", "text": "", "tool_calls": [call.model_dump()],
         "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}},
        {"type": "tool.started", "turn_id": "t1", "call_id": call.id, "name": "read_file",
         "arguments": {"path": "notes.txt"}},
    ]  # fmt: skip
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))

    async def resume() -> list:
        session = Session(settings(server.url, repo), resume=log)
        assert (session.state.task_open, session.state.repeats) == (True, 1)
        async with session:
            assert session.state.repeats == 0  # the call made again is no loop of the model's
            session.submit(Continue())
            return await until_finished(session)

    seen = asyncio.run(resume())
    aborted = [e for e in seen if e.type == "turn.aborted"]
    assert [(e.turn_id, e.reason) for e in aborted] == [("t1", "crashed")]
    assert seen[-1].status == "completed" and seen[-1].usage.total_tokens > 15
    sent = server.requests[0].messages
    results = [m["content"] for m in sent if m["role"] == "tool"]
    assert results == [UNFINISHED_RESULT]
    assert not any(
        "interrupted this turn" in str(m["content"]) for m in sent
    )  # a crash, not the user


def test_what_the_log_redacts_the_live_state_holds_redacted_too(scripted_server, repo):
    key = "sk-proj-" + "a1B2c3D4" * 4
    server = scripted_server([Reply(text=f"The key is {key}.")])

    async def live() -> tuple[SessionState, Path]:
        async with Session(settings(server.url, repo)) as session:
            session.submit(UserPrompt(text="what is the key?"))
            finished = (await until_finished(session))[-1]
            assert key in finished.final_message  # the person sees it; the log and the state do not
            return session.state, session.log.path

    state, log = asyncio.run(live())
    assert state.history[-1].content == "The key is [REDACTED]."
    rebuilt = fold(read_events(log), SessionState(session_id=state.session_id))
    assert [m.model_dump() for m in rebuilt.history] == [m.model_dump() for m in state.history]


def test_older_logs_still_read():
    """Lines written before status, turn ids and the closed error set parse, filled in from what they hold."""
    finished = parse_event(
        '{"type":"tool.finished","call_id":"c","name":"read_file","ok":false,"output":"x"}'
    )
    assert finished.status == "error" and finished.turn_id == ""
    error = parse_event('{"type":"error","error_class":"KeyError","message":"m"}')
    assert error.error_class == "ProviderError"
