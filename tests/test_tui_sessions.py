"""Sessions reopened in the TUI: one a headless run left (`keel resume ID`), and past ones through /sessions."""

from __future__ import annotations

import pytest
from keel_cli import run_keel, run_streamed
from tui_support import send, settings_for, type_text, wait_until

from keel.agent.core.api import find_session, read_session
from keel.agent.core.config_files import ConfigSources
from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall
from keel.tui.app import KeelApp
from keel.tui.launch import build_app
from keel.tui.screens.approval_modal import ApprovalModal
from keel.tui.transcript import NoticeEntry, UserEntry
from keel.tui.widgets.prompt_input import PromptInput
from keel.tui.widgets.session_list import SessionList
from keel.tui.widgets.tool_panel import ToolPanel
from keel.tui.widgets.transcript_view import TranscriptView

pytestmark = pytest.mark.usefixtures("core_loaded")


@pytest.fixture
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("KEEL_MODEL", raising=False)
    monkeypatch.delenv("KEEL_API_BASE", raising=False)


def notices(handle) -> list[str]:
    return [e.text for e in handle.transcript.entries if isinstance(e, NoticeEntry)]


async def test_a_headless_session_resumed_in_the_ui_goes_on_under_the_uis_approval(
    scripted_server, calc_repo, tmp_path, no_user_config
):
    """`keel resume ID` of a `keel run` session: the UI says (and applies) its own default, auto-edit."""
    command = ScriptedToolCall(name="run_command", arguments={"command": "echo resumed"})
    server = scripted_server(
        [Reply(text="headless answer"), Reply(tool_calls=[command]), Reply(text="ran it")]
    )
    headless = run_streamed(server.url, "first task", cwd=calc_repo, home=tmp_path / "home")
    assert headless.returncode == 0, headless.stderr
    log = find_session(None, calc_repo)
    assert log is not None
    history = read_session(log)
    assert history[0].approval == "full-auto"  # the headless default

    sources = ConfigSources.find(calc_repo, {"model": "openai/any", "api_base": server.url})
    app = build_app(sources, calc_repo, log, history)  # as `keel resume ID` builds it
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        assert handle.stats.approval == "auto-edit"
        last = notices(handle)[-1]
        assert "approval: auto-edit" in last and "full-auto" in last
        await send(pilot, "run echo")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalModal), "the approval modal")
        await pilot.press("a")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        assert handle.session is not None and handle.session.id == log.stem


def read_reply(path: str = "calc.py") -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": path})])


async def test_typing_where_nothing_takes_it_goes_to_the_prompt_and_tab_reaches_it(
    scripted_server, calc_repo
):
    """After /sessions (the list focused) or in the transcript, what is typed lands in the prompt box;
    Tab goes list → newest tool row → prompt, not through every tool row."""
    server = scripted_server([read_reply(), read_reply(), read_reply(), Reply(text="read thrice")])
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "read it three times")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        prompt = app.screen.query_one(PromptInput)
        transcript = app.screen.query_one(TranscriptView)
        await send(pilot, "/sessions")
        await wait_until(pilot, lambda: isinstance(app.focused, SessionList), "the list focused")
        await type_text(pilot, "next task")
        await pilot.pause()
        assert prompt.value == "next task" and app.focused is prompt

        await pilot.press("tab")
        assert isinstance(app.focused, SessionList)
        await pilot.press("tab")
        assert app.focused is not None and transcript in app.focused.ancestors
        newest = list(app.screen.query(ToolPanel))[-1]
        assert newest in app.focused.ancestors, "Tab lands on the newest tool row"
        await type_text(pilot, " now")
        await pilot.pause()
        assert prompt.value == "next task now" and app.focused is prompt

        await pilot.press("shift+tab", "shift+tab")  # back up the tool rows, one by one
        assert app.focused is not None and transcript in app.focused.ancestors
        await pilot.press("tab")
        assert app.focused is prompt, "one Tab from any tool row reaches the prompt"


async def test_sessions_lists_this_directorys_past_sessions_and_reopens_one(
    scripted_server, calc_repo, tmp_path
):
    """/sessions lists what `keel sessions` lists here; /sessions N reopens it as an agent that goes on."""
    server = scripted_server([Reply(text="headless answer"), Reply(text="went on")])
    headless = run_streamed(server.url, "the headless task", cwd=calc_repo, home=tmp_path / "home")
    assert headless.returncode == 0, headless.stderr
    log = find_session(None, calc_repo)
    assert log is not None
    assert log.stem in run_keel("sessions", cwd=calc_repo, home=tmp_path / "home").stdout
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        first = app.pool.handles[0]
        await send(pilot, "/sessions")
        await wait_until(pilot, lambda: log.stem in notices(first)[-1], "the past sessions listed")
        listed = notices(first)[-1]
        assert "the headless task" in listed and "/sessions N" in listed

        await send(pilot, "/sessions 1")
        await wait_until(pilot, lambda: len(app.pool.handles) == 2, "the session reopened")
        reopened = app.pool.handles[1]
        assert app.screen.selected is reopened and app.focused is app.screen.query_one(PromptInput)
        said = [e.text for e in reopened.transcript.entries if isinstance(e, UserEntry)]
        assert said == ["the headless task"]

        await send(pilot, "/sessions")  # the one open here is not listed again
        await wait_until(pilot, lambda: "no past sessions" in notices(reopened)[-1], "the listing")
        await send(pilot, "/sessions 3")
        assert "from 1 to" in notices(reopened)[-1] or "lists them first" in notices(reopened)[-1]

        await app.screen.select(
            first
        )  # by id (its dated prefix), the one open here is selected again
        await send(pilot, f"/sessions {log.stem[:15]}")
        await wait_until(
            pilot, lambda: app.screen.selected is reopened, "the reopened one selected"
        )
        assert len(app.pool.handles) == 2

        await send(pilot, "go on")
        await wait_until(pilot, lambda: reopened.stats.status == "done", "the reopened task")
        assert reopened.session is not None and reopened.session.id == log.stem
    assert "the headless task" in str(server.requests[-1].messages)
