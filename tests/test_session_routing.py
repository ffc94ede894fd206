"""Routing: every model call of a session names the session (an X-Session-ID header, and with token recording
the body's `session_id`), so a trainer's router keeps a rollout on one server's prefix cache; sampling
parameters go through unchanged, and the embedded model is not handed any of it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from keel_cli import git_repo
from small_model_support import CALC, CAPABLE, FIX, call, run_task, served_settings

from keel.agent.core.model.client import ModelClient
from keel.agent.core.model.local.client import EmbeddedClient
from keel.agent.core.protocol import SessionStarted, TaskFinished, UserPrompt
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.harness.testing.scripted_server import (
    ChatRequest,
    Reply,
    ReplyTokens,
    ScriptedToolCall,
)


def reads_then_answers(request: ChatRequest) -> Reply:
    tokens = ReplyTokens(prompt_token_ids=[1, 2], completion_token_ids=[3], logprobs=[-0.5])
    if any(m.get("role") == "tool" for m in request.messages):
        return Reply(text="It holds a.", tokens=tokens)
    call = ScriptedToolCall(name="read_file", arguments={"path": "a.py"})
    return Reply(tool_calls=[call], tokens=tokens)


def run_sessions(url: str, repo: Path, record_tokens: bool, count: int = 2) -> list[str]:
    """Run `count` sessions one after the other, each reading a file then answering; their ids."""

    async def one() -> str:
        settings = SessionSettings(
            cwd=repo,
            model="openai/any",
            api_base=url,
            temperature=0.3,
            record_tokens=record_tokens,
        )
        session_id = ""
        async with Session(settings) as session:
            session.submit(UserPrompt(text="what is in a.py?"))
            async for event in session.events():
                if isinstance(event, SessionStarted):
                    session_id = event.session_id
                if isinstance(event, TaskFinished):
                    assert event.status == "completed", event
                    break
        return session_id

    async def all_of_them() -> list[str]:
        return [await one() for _ in range(count)]

    return asyncio.run(all_of_them())


def test_every_call_of_a_session_names_it_and_sessions_differ(
    scripted_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    server = scripted_server(reads_then_answers)
    first, second = run_sessions(server.url, git_repo(tmp_path / "r", {"a.py": "a = 1\n"}), True)
    assert first and second and first != second
    requests = server.requests
    assert len(requests) == 4
    for request, session_id in zip(requests, [first, first, second, second], strict=True):
        assert request.headers["x-session-id"] == session_id
        assert request.body["session_id"] == session_id
        assert request.body["temperature"] == 0.3  # sampling parameters as they were
        assert request.body["return_token_ids"] is True and request.body["logprobs"] is True


def test_without_token_recording_only_the_header_names_the_session(
    scripted_server, tmp_path, monkeypatch
):
    """A plain OpenAI-compatible server (OpenAI itself refuses unknown fields) gets the header alone."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    server = scripted_server(reads_then_answers)
    repo = git_repo(tmp_path / "r", {"a.py": "a = 1\n"})
    (session_id,) = run_sessions(server.url, repo, False, count=1)
    for request in server.requests:
        assert request.headers["x-session-id"] == session_id
        assert "session_id" not in request.body and "return_token_ids" not in request.body
        assert request.body["temperature"] == 0.3


def test_through_litellm_the_calls_name_the_session_too(scripted_server):
    server = scripted_server(["hi", "hi"])

    async def call(record_tokens: bool) -> None:
        client = ModelClient(
            model="openai/m",
            api_base=server.url,
            retries=0,
            record_tokens=record_tokens,
            session_id="s-42",
            extra={"temperature": 0.7, "seed": 5},
        )
        client._direct = None  # as KEEL_TRANSPORT=litellm would
        await client.complete([{"role": "user", "content": "hi"}], None, lambda _: None)

    asyncio.run(call(True))
    asyncio.run(call(False))
    recorded, plain = server.requests
    assert recorded.headers["x-session-id"] == plain.headers["x-session-id"] == "s-42"
    assert recorded.body["session_id"] == "s-42" and "session_id" not in plain.body
    assert recorded.body["temperature"] == plain.body["temperature"] == 0.7
    assert recorded.body["seed"] == plain.body["seed"] == 5


def test_a_calls_own_reply_limit_wins_over_the_profiles(scripted_server):
    """A served small model's profile limits every reply (max_tokens in `extra`); a call that names its own
    limit (the summarizer's) is sent with that one, over both transports."""
    server = scripted_server([Reply(text="a"), Reply(text="b"), Reply(text="c"), Reply(text="d")])

    async def calls(direct: bool) -> None:
        client = ModelClient(
            model="openai/m", api_base=server.url, retries=0, extra={"max_tokens": 2048}
        )
        if not direct:
            client._direct = None  # as KEEL_TRANSPORT=litellm would
        message = [{"role": "user", "content": "hi"}]
        await client.complete(message, None, lambda _: None)
        await client.complete(message, None, lambda _: None, max_tokens=300)

    asyncio.run(calls(True))
    asyncio.run(calls(False))
    assert [r.body["max_tokens"] for r in server.requests] == [2048, 300, 2048, 300]


def test_the_embedded_model_gets_its_sampling_parameters_and_no_session_id():
    """Nothing is loaded here: the client for the embedded model is built, with the parameters it samples
    with, untouched (its worker has no router to tell)."""
    client = ModelClient(
        model="keel-local/", session_id="s-1", record_tokens=True, extra={"temperature": 0.2}
    )
    assert isinstance(client._direct, EmbeddedClient)
    assert client._direct.extra == {"temperature": 0.2}
    assert client._direct.record_tokens is True


BROKEN = Reply(text='{"name": "read_file", "arguments": {"path": calc.py}}')  # not JSON: corrected


async def test_a_recorded_session_moved_to_the_small_profile_samples_as_it(
    scripted_server, tmp_path, monkeypatch
):
    """The small profile's temperature reaches the wire with token recording too (the direct client used to
    keep a copy of the parameters it was built with when it added the token request to them)."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    workspace = git_repo(tmp_path / "repo", CALC)
    server = scripted_server([BROKEN, BROKEN, call("edit_file", **FIX), Reply(text="fixed")])
    settings = served_settings(server, workspace, CAPABLE, record_tokens=True)
    events, log = await run_task(settings, "make add add")
    assert events[-1].status == "completed"
    assert any(e.type == "profile.changed" for e in log)
    first, _, third = server.requests[:3]
    assert "temperature" not in first.body and third.body["temperature"] == 0.2
    assert first.body["return_token_ids"] is True and third.body["return_token_ids"] is True
    assert (
        first.headers["x-session-id"] == third.headers["x-session-id"] == third.body["session_id"]
    )
