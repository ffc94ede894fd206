"""Keel's own bugs are internal errors, not provider failures: exit 1, an `InternalError` event, the traceback in
$KEEL_HOME/logs/ and, with --debug, on stderr. Real `keel` processes against the scripted server; the bug is
raised at a documented fault point (KEEL_TEST_FAULT), not by mocking keel's code."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import httpx
import litellm
import pytest
from keel_cli import git_repo, run_keel, run_streamed

from keel.agent.core.diagnostics import (
    FAULT_ENV,
    INTERNAL_ERROR,
    log_internal_error,
    set_debug,
    tracebacks_held,
)
from keel.agent.core.errors import ProviderError, RetryableProviderError
from keel.agent.core.model.client import classify
from keel.agent.harness.testing.scripted_server import Reply


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "repo", {"README.md": "internal errors\n"})


def logs(home: Path) -> list[Path]:
    return sorted((home / "logs").glob("*.log")) if (home / "logs").is_dir() else []


def test_a_bug_while_handling_a_reply_ends_the_run_as_an_internal_error(
    scripted_server, repo, tmp_path
):
    home = tmp_path / "home"
    server = scripted_server(["a reply keel will fail to handle"])
    result = run_streamed(server.url, "say hi", cwd=repo, home=home, **{FAULT_ENV: "model.reply"})

    assert result.returncode == 1, result.stderr
    errors = [event for event in result.events if event["type"] == "error"]
    assert [(e["error_class"], e["fatal"]) for e in errors] == [(INTERNAL_ERROR, True)]
    assert "InjectedFault" in errors[0]["message"]
    assert "model.retry" not in result.types(), "a bug of keel's is not retried as a provider fault"
    assert len(server.requests) == 1
    finished = result.events[-1]
    assert finished["type"] == "session.finished" and finished["status"] == "error"

    [log] = logs(home)
    assert log.stem == result.events[0]["session_id"]
    trace = log.read_text()
    assert "Traceback (most recent call last)" in trace
    assert "inject_fault" in trace and "InjectedFault" in trace
    assert str(log) in errors[0]["message"], "the event says where the traceback is"
    assert "Traceback" not in result.stderr, "without --debug the traceback stays in the log"


@pytest.mark.parametrize("where", ["before run", "after run"])
def test_debug_prints_the_traceback_on_stderr(scripted_server, repo, tmp_path, where):
    server = scripted_server(["hi"])
    common = ("--model", "openai/any", "--api-base", server.url, "say hi")
    args = ("--debug", "run", *common) if where == "before run" else ("run", "--debug", *common)
    result = run_keel(*args, cwd=repo, home=tmp_path / "home", **{FAULT_ENV: "model.reply"})

    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "InjectedFault: a fault injected at model.reply" in result.stderr
    assert "internal error" in result.stderr


def test_a_provider_failure_stays_a_provider_error_and_logs_nothing(
    scripted_server, repo, tmp_path
):
    home = tmp_path / "home"
    server = scripted_server([Reply(error=401)])
    result = run_streamed(server.url, "say hi", cwd=repo, home=home)

    assert result.returncode == 1
    [error] = [event for event in result.events if event["type"] == "error"]
    assert error["error_class"] not in (INTERNAL_ERROR, "")
    assert "internal error" not in error["message"]
    assert logs(home) == []


def test_a_bug_outside_any_session_is_one_line_and_a_logged_traceback(repo, tmp_path):
    home = tmp_path / "home"
    plain = run_keel("sessions", cwd=repo, home=home, **{FAULT_ENV: "cli"})
    lines = plain.stderr.strip().splitlines()
    assert plain.returncode == 1 and len(lines) == 1, plain.stderr
    assert lines[0].startswith("keel: internal error: InjectedFault")
    [log] = logs(home)
    assert str(log) in lines[0] and "Traceback" in log.read_text()

    debug = run_keel("--debug", "sessions", cwd=repo, home=home, **{FAULT_ENV: "cli"})
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr


@pytest.mark.parametrize(
    "exc",
    [
        litellm.RateLimitError("slow down", llm_provider="openai", model="gpt-4o-mini"),
        litellm.BadRequestError("bad", llm_provider="openai", model="gpt-4o-mini"),
        httpx.ReadTimeout("timed out"),
        ConnectionResetError("reset by peer"),
        TimeoutError(),
        ssl.SSLError("handshake"),
        ProviderError("the embedded model failed", "LocalModelError"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_what_the_provider_stack_raises_is_a_provider_error(exc):
    assert isinstance(classify(exc), ProviderError)


def test_retryable_faults_stay_retryable():
    assert isinstance(classify(ConnectionResetError()), RetryableProviderError)
    assert isinstance(classify(litellm.Timeout("t", "gpt", "openai")), RetryableProviderError)


@pytest.mark.parametrize(
    "exc",
    [KeyError("usage"), AttributeError("'list' has no attribute 'get'"), TypeError("x"), OSError()],
    ids=lambda exc: type(exc).__name__,
)
def test_keels_own_errors_are_not_provider_errors(exc):
    assert classify(exc) is None


def test_a_ui_holds_debug_tracebacks_until_it_lets_go_of_the_terminal(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path))
    set_debug(True)
    try:
        with tracebacks_held():
            try:
                raise ValueError("a bug while the UI draws")
            except ValueError as exc:
                log = log_internal_error(exc, "s1", redact=lambda text: text.replace("UI", "**"))
            assert capsys.readouterr().err == ""
        shown = capsys.readouterr().err
    finally:
        set_debug(False)
    assert "ValueError: a bug while the ** draws" in shown and "Traceback" in shown
    assert log == tmp_path / "logs" / "s1.log" and "a bug while the ** draws" in log.read_text()


async def test_a_bug_during_compact_is_logged_and_the_session_goes_on(
    scripted_server, repo, tmp_path, monkeypatch
):
    from keel.agent.core.protocol import Compact, Error, TaskFinished, TurnStarted, UserPrompt
    from keel.agent.core.session import Session
    from keel.agent.core.settings import SessionSettings

    home = tmp_path / "home"
    monkeypatch.setenv("KEEL_HOME", str(home))
    # the compact request is served (the fault strikes as keel handles the reply), then the second prompt
    server = scripted_server(["first answer", "a summary keel fails to handle", "second answer"])
    settings = SessionSettings(cwd=repo, model="openai/any", api_base=server.url, checkpoints=False)
    async with Session(settings) as session:
        session.submit(UserPrompt(text="first"))
        async for event in session.events():
            if isinstance(event, TaskFinished):
                break
        monkeypatch.setenv(FAULT_ENV, "model.reply")
        session.submit(Compact())
        errors = []
        async with asyncio.timeout(
            30
        ):  # before the fix, no error came and the compact's task died silently
            async for event in session.events():
                if isinstance(event, Error):
                    errors.append(event)
                    break
        monkeypatch.delenv(FAULT_ENV)
        session.submit(UserPrompt(text="second"))
        turns = []
        async for event in session.events():
            turns.append(event)
            if isinstance(event, TaskFinished):
                break
    assert [(e.error_class, e.fatal) for e in errors] == [(INTERNAL_ERROR, False)]
    assert len(logs(home)) == 1
    assert isinstance(turns[0], TurnStarted) and turns[-1].status == "completed"
    assert turns[-1].final_message == "second answer"
