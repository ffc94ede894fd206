"""Sessions reopened in the TUI: one a headless run left (`keel resume ID`), and past ones through /sessions."""

from __future__ import annotations

import pytest
from keel_cli import run_streamed
from tui_support import send, wait_until

from keel.agent.api import find_session, read_session
from keel.agent.config_files import ConfigSources
from keel.agent.testing.scripted_server import Reply, ScriptedToolCall
from keel.tui.launch import build_app
from keel.tui.screens.approval_modal import ApprovalModal
from keel.tui.transcript import NoticeEntry

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
