"""Plan mode and the todo list in the TUI, driven by Pilot against the scripted server: /plan, the plan offered
for review, accepting it (as is or edited) goes on in the same session with every tool; the todo panel."""

from __future__ import annotations

import pytest
from textual.widgets import TextArea
from tui_support import send, settings_for, wait_until

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall
from keel.tui.app import KeelApp
from keel.tui.screens.plan_review import PlanReview
from keel.tui.transcript import ToolEntry
from keel.tui.widgets.status_bar import StatusBar
from keel.tui.widgets.todo_panel import TodoPanel

pytestmark = pytest.mark.usefixtures("core_loaded")

FIXED = "def add(a, b):\n    return a + b\n"
PLAN = "1. In calc.py, make add() return a + b."


def call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


def status_line(app: KeelApp) -> str:
    """The main screen's status bar, under whatever dialog is open."""
    return str(app.screen_stack[0].query_one(StatusBar).render())


async def test_accepting_a_plan_carries_it_out_in_the_same_session(scripted_server, calc_repo):
    server = scripted_server(
        [
            call("write_file", path="calc.py", content=FIXED),
            Reply(text=PLAN),
            call("read_file", path="calc.py"),
            call("write_file", path="calc.py", content=FIXED),
            Reply(text="Done: add() adds."),
        ]
    )
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await send(pilot, "/plan fix add")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanReview), "the plan to review")
        assert (calc_repo / "calc.py").read_text() != FIXED  # refused while planning
        first = [e for e in handle.transcript.entries if isinstance(e, ToolEntry)]
        assert [t.state for t in first] == ["denied"]
        assert "plan mode" in status_line(app)
        session = handle.session
        assert app.screen.query_one(TextArea).text == PLAN
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the plan carried out")
        await wait_until(pilot, lambda: (calc_repo / "calc.py").read_text() == FIXED, "the edit")
        assert handle.session is session and not handle.stats.plan_mode
        tools = [e for e in handle.transcript.entries if isinstance(e, ToolEntry)]
        assert [t.state for t in tools] == ["denied", "ok", "ok"]
        assert "plan mode" not in status_line(app)
    told = [m["content"] for m in server.requests[-1].messages if m["role"] == "user"]
    assert PLAN in told and any("plan mode is over" in text for text in told)


async def test_an_edited_plan_is_the_next_prompt_and_escape_keeps_planning(
    scripted_server, calc_repo
):
    server = scripted_server(
        [Reply(text=PLAN), Reply(text="Another plan."), Reply(text="Did the edited plan.")]
    )
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        await pilot.press("f4")
        assert handle.stats.plan_mode
        assert "plan mode" in status_line(app)
        await send(pilot, "fix add")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanReview), "the plan to review")
        await pilot.press("escape")
        assert handle.stats.plan_mode and not isinstance(app.screen, PlanReview)
        await send(pilot, "think again")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanReview), "the second plan")
        area = app.screen.query_one(TextArea)
        area.text = "Only add a docstring."
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the edited plan done")
        assert not handle.stats.plan_mode
    told = [m["content"] for m in server.requests[-1].messages if m["role"] == "user"]
    assert "Only add a docstring." in told


async def test_the_todo_panel_follows_the_model_s_list(scripted_server, calc_repo):
    items = [
        {"content": "read calc.py", "status": "done"},
        {"content": "fix add()", "status": "in_progress"},
    ]
    server = scripted_server([call("todo", items=items), Reply(text="On it.")])
    app = KeelApp(settings_for(calc_repo, server.url))
    async with app.run_test(size=(120, 40)) as pilot:
        handle = app.pool.handles[0]
        panel = app.screen.query_one(TodoPanel)
        assert not panel.has_class("-shown")
        await send(pilot, "fix add")
        await wait_until(pilot, lambda: handle.stats.status == "done", "the task to finish")
        await pilot.pause()
        assert panel.has_class("-shown")
        shown = str(panel.render())
        assert "1/2 done" in shown and "fix add()" in shown and "read calc.py" in shown
