"""The TUI shows a session's subagents under it in the agent list, and their start and end in its transcript."""

from __future__ import annotations

from pathlib import Path

from tui_support import FIXED_TS, demo_started

from keel.agent.core.protocol import (
    AssistantMessage,
    SubagentFinished,
    SubagentStarted,
    TokenUsage,
    ToolCall,
    ToolFinished,
    ToolStarted,
    UserMessage,
)
from keel.agent.core.settings import SessionSettings
from keel.tui.app import KeelApp
from keel.tui.transcript import NoticeEntry, SessionStats, Transcript
from keel.tui.widgets.prompt_input import PromptInput
from keel.tui.widgets.session_row import row_text

SIZE = (120, 36)
REVIEW = {"description": "review calc.py", "prompt": "Review calc.py.", "agent": "reviewer"}
EXPLORE = {"description": "find the tests", "prompt": "Where are the tests?"}


def history() -> list:
    """A task that asked a reviewer (finished) and a read-only helper (still running)."""
    review = ToolCall(id="call_1", name="task", arguments="{}")
    explore = ToolCall(id="call_2", name="task", arguments="{}")
    return [
        demo_started(),
        UserMessage(ts=FIXED_TS, text="review calc.py, then find its tests"),
        AssistantMessage(ts=FIXED_TS, text="", tool_calls=[review]),
        ToolStarted(ts=FIXED_TS, call_id="call_1", name="task", arguments=REVIEW),
        SubagentStarted(
            ts=FIXED_TS,
            child_session_id="20250101-120001-aaaaaa",
            agent="reviewer",
            description="review calc.py",
            tools=["read_file", "search", "find_files"],
        ),
        SubagentFinished(
            ts=FIXED_TS,
            child_session_id="20250101-120001-aaaaaa",
            agent="reviewer",
            status="completed",
            final_message="calc.py looks fine.",
            usage=TokenUsage(prompt_tokens=2_000, completion_tokens=400, total_tokens=2_400),
        ),
        ToolFinished(ts=FIXED_TS, call_id="call_1", name="task", output="calc.py looks fine."),
        AssistantMessage(ts=FIXED_TS, text="", tool_calls=[explore]),
        ToolStarted(ts=FIXED_TS, call_id="call_2", name="task", arguments=EXPLORE),
        SubagentStarted(
            ts=FIXED_TS,
            child_session_id="20250101-120002-bbbbbb",
            description="find the tests",
            tools=["read_file", "search", "find_files", "code_map"],
        ),
    ]


def test_children_are_listed_under_their_session_with_status_and_tokens():
    transcript = Transcript(SessionStats(model="openai/any"))
    for event in history():
        transcript.apply(event)
    children = transcript.stats.children
    assert [(c.name, c.status, c.tokens) for c in children] == [
        ("reviewer", "done", 2_400),
        ("helper", "running", 0),
    ]
    notes = [e.text for e in transcript.entries if isinstance(e, NoticeEntry)]
    assert "subagent reviewer: review calc.py (session 20250101-120001-aaaaaa)" in notes
    assert "subagent reviewer completed · 2.4k tokens" in notes


def demo_settings() -> SessionSettings:
    return SessionSettings(
        cwd=Path("/work/demo"),
        model="openai/any",
        interactive=True,
        approval="auto-edit",
        budget=50_000,
    )


async def steady_cursor(pilot) -> None:
    pilot.app.screen.query_one(PromptInput).cursor_blink = False


def test_the_agent_list_shows_a_session_s_subagents(snap_compare):
    app = KeelApp(demo_settings(), history=history())
    handle = app.pool.handles[0]
    text = row_text(handle).plain
    assert "↳ ✓ reviewer 2.4k" in text and "↳ ● helper running" in text
    assert snap_compare(app, terminal_size=SIZE, run_before=steady_cursor)


def test_help_describes_subagents_and_where_agents_are_defined():
    from rich.console import Console

    from keel.tui.screens.help_screen import help_table

    console = Console(width=160, record=True)
    console.print(help_table())
    shown = " ".join(console.export_text().split())
    assert "subagents" in shown and ".claude/agents/*.md" in shown and "keel trust" in shown


def test_a_long_list_of_subagents_shows_the_latest_and_counts_the_rest():
    app = KeelApp(demo_settings())
    handle = app.pool.handles[0]
    for number in range(5):
        handle.transcript.apply(
            SubagentStarted(ts=FIXED_TS, child_session_id=f"child-{number}", agent=f"a{number}")
        )
    lines = row_text(handle).plain.splitlines()
    assert lines[-4:] == [
        "  ↳ 2 earlier subagents",
        "  ↳ ● a2 running",
        "  ↳ ● a3 running",
        "  ↳ ● a4 running",
    ]
