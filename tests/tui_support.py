"""Helpers for the TUI tests: settings against the scripted server, waiting on the app, fixed histories."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from keel.agent.core.protocol import (
    AssistantMessage,
    BudgetUpdated,
    SessionStarted,
    TaskFinished,
    TokenUsage,
    ToolCall,
    ToolFinished,
    ToolStarted,
    UserMessage,
)
from keel.agent.core.settings import SessionSettings

FIXED_TS = 1_700_000_000.0
CALC = {"calc.py": "def add(a, b):\n    return a - b\n"}
CALC_DIFF = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"


def settings_for(repo: Path, url: str, **overrides: object) -> SessionSettings:
    """Interactive settings against the scripted server (auto-edit: commands ask, edits do not)."""
    values: dict[str, object] = {
        "cwd": repo,
        "model": "openai/any",
        "api_base": url,
        "interactive": True,
        "approval": "auto-edit",
        "context_window": 32_768,
        "retries": 0,
    }
    values.update(overrides)
    return SessionSettings.model_validate(values)


async def wait_until(
    pilot: Pilot, condition: Callable[[], bool], what: str, timeout: float = 60
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await pilot.pause(0.05)


async def type_text(pilot: Pilot, text: str) -> None:
    """Type like a person: one key per character (space has its own key name)."""
    await pilot.press(*["space" if ch == " " else ch for ch in text])


async def send(pilot: Pilot, text: str) -> None:
    """Type a prompt and press Enter."""
    await type_text(pilot, text)
    await pilot.press("enter")


def demo_started(session_id: str = "20250101-120000-abcdef") -> SessionStarted:
    """The session.started of the demo sessions the snapshots show; its timestamp fixed."""
    return SessionStarted(
        ts=FIXED_TS,
        session_id=session_id,
        model="openai/any",
        cwd="/work/demo",
        context_window=32_768,
        tool_protocol="native",
        approval="auto-edit",
        budget=50_000,
    )


def fixed_history(session_id: str = "20250101-120000-abcdef") -> list:
    """A finished task with an answer, a read and an edit with its diff; timestamps fixed."""
    usage = TokenUsage(prompt_tokens=2_900, completion_tokens=310, total_tokens=3_210)
    read = ToolCall(id="call_1", name="read_file", arguments='{"path": "calc.py"}')
    edit = ToolCall(id="call_2", name="edit_file", arguments="{}")
    edit_args = {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}
    return [
        demo_started(session_id),
        UserMessage(ts=FIXED_TS, text="add() subtracts; fix it and tell me what was wrong"),
        AssistantMessage(ts=FIXED_TS, text="Let me look at `calc.py`.", tool_calls=[read]),
        ToolStarted(ts=FIXED_TS, call_id="call_1", name="read_file", arguments={"path": "calc.py"}),
        ToolFinished(
            ts=FIXED_TS,
            call_id="call_1",
            name="read_file",
            ok=True,
            output="     1\tdef add(a, b):\n     2\t    return a - b",
            duration_ms=12,
        ),
        AssistantMessage(ts=FIXED_TS, text="", tool_calls=[edit]),
        ToolStarted(ts=FIXED_TS, call_id="call_2", name="edit_file", arguments=edit_args),
        ToolFinished(
            ts=FIXED_TS,
            call_id="call_2",
            name="edit_file",
            ok=True,
            output="Edited calc.py: replaced 1 occurrence at line 2.",
            diff=CALC_DIFF,
            duration_ms=30,
        ),
        AssistantMessage(
            ts=FIXED_TS,
            text="Fixed. `add` used **minus**:\n\n- `calc.py` now returns `a + b`\n"
            "- nothing else calls it",
            usage=usage,
            cost=0.0042,
        ),
        BudgetUpdated(
            ts=FIXED_TS, used=3_210, budget=50_000, context_tokens=2_950, context_window=32_768
        ),
        TaskFinished(
            ts=FIXED_TS,
            status="completed",
            final_message="Fixed.",
            usage=usage,
            steps=2,
            cost=0.0042,
        ),
    ]
