"""When a task stops because its model is not getting there: too many replies in a row that could not be run,
that called only tools that do not exist, or that made the same call again. Every kind of model alike."""

from __future__ import annotations

from collections.abc import Collection

from keel.agent.core.config import LoopSettings
from keel.agent.core.generic_failures import unknown_call_streak
from keel.agent.core.protocol import ToolCall
from keel.agent.core.state import LimitExceeded, SessionState

LOOP_WARN, LOOP_STOP = (
    3,
    5,
)  # the same call this many times in a row: a warning with its result; the stop


def stop_after_corrections(state: SessionState, policy: LoopSettings, problem: str) -> None:
    """After `max_corrections` corrections in a row, the next reply that cannot be run stops the task."""
    if state.corrections >= policy.max_corrections:
        raise LimitExceeded(
            "error",
            f"the model's last {state.corrections + 1} replies could not be run; the last: {problem}",
        )


def stop_after_unknown_calls(
    state: SessionState, policy: LoopSettings, tool_names: Collection[str], calls: list[ToolCall]
) -> None:
    """After more than `max_corrections` replies in a row whose text called only tools that do not exist
    (each answered with the list of tools), the task stops."""
    streak = unknown_call_streak(state, tool_names)
    if streak > policy.max_corrections:
        names = ", ".join(sorted({call.name for call in calls}))
        raise LimitExceeded(
            "error",
            f"the model's last {streak} replies called only tools that do not exist; the last: {names}",
        )


def stop_repeats(name: str, repeats: int) -> None:
    """The same call made LOOP_STOP times in a row stops the task."""
    if repeats >= LOOP_STOP:
        raise LimitExceeded(
            "loop_detected", f"the model made the same {name} call {repeats} times in a row"
        )
