"""Snapshots of what a person sees: the main screen, a tool panel with a diff, the approval modal."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from tui_support import CALC_DIFF, FIXED_TS, fixed_history

from keel.agent.core.protocol import ApprovalRequested, PlanModeChanged, TodoItem, TodoUpdated
from keel.agent.core.settings import SessionSettings
from keel.tui.app import KeelApp
from keel.tui.screens.approval_modal import ApprovalModal
from keel.tui.transcript import ToolEntry
from keel.tui.widgets.prompt_input import PromptInput
from keel.tui.widgets.tool_panel import ToolPanel

SIZE = (120, 36)


def demo_settings() -> SessionSettings:
    """Never started: the snapshots show a replayed history, so nothing volatile reaches the screen."""
    return SessionSettings(
        cwd=Path("/work/demo"),
        model="openai/any",
        interactive=True,
        approval="auto-edit",
        budget=50_000,
    )


def demo_app() -> KeelApp:
    app = KeelApp(demo_settings(), history=fixed_history())
    app.pool.add(
        demo_settings().model_copy(update={"model": "anthropic/claude-sonnet"}), name="agent 2"
    )
    return app


class ToolPanelApp(App[None]):
    CSS_PATH = KeelApp.CSS_PATH

    def compose(self) -> ComposeResult:
        arguments = {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}
        yield ToolPanel(
            ToolEntry(
                "call_2",
                "edit_file",
                arguments,
                state="ok",
                output="Edited calc.py: replaced 1 occurrence at line 2.",
                diff=CALC_DIFF,
                duration_ms=30,
            )
        )
        yield ToolPanel(
            ToolEntry(
                "call_3",
                "run_command",
                {"command": "pytest -q"},
                state="failed",
                output="1 failed in 0.12s",
                duration_ms=840,
            )
        )


async def steady_cursor(pilot) -> None:
    """A blinking cursor is on or off depending on when the picture is taken: keep it on."""
    pilot.app.screen.query_one(PromptInput).cursor_blink = False


def test_main_screen(snap_compare):
    assert snap_compare(demo_app(), terminal_size=SIZE, run_before=steady_cursor)


def test_tool_panel_with_a_diff(snap_compare):
    assert snap_compare(ToolPanelApp(), terminal_size=(80, 16))


def test_approval_modal(snap_compare):
    request = ApprovalRequested(
        ts=FIXED_TS,
        call_id="call_9",
        name="run_command",
        arguments={"command": "python -m pytest -q tests/test_calc.py"},
        reason="run_command is an exec tool and the policy is auto-edit",
    )

    async def open_modal(pilot) -> None:
        await steady_cursor(pilot)
        await pilot.app.push_screen(ApprovalModal(request, "agent 1"))

    assert snap_compare(demo_app(), terminal_size=SIZE, run_before=open_modal)


def test_main_screen_with_a_todo_list_in_plan_mode(snap_compare):
    """The model's checklist beside the transcript, and plan mode in the status line."""
    history = fixed_history()
    items = [
        TodoItem(content="read calc.py", status="done"),
        TodoItem(content="make add() add", status="in_progress"),
        TodoItem(content="run the tests", status="pending"),
    ]
    history[2:2] = [
        PlanModeChanged(ts=FIXED_TS, active=True),
        TodoUpdated(ts=FIXED_TS, call_id="call_0", items=items),
    ]
    app = KeelApp(demo_settings(), history=history)
    assert snap_compare(app, terminal_size=SIZE, run_before=steady_cursor)
