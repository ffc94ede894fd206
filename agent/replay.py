"""Rebuilds a session's state from its event log, so any run can be resumed or replayed."""

from __future__ import annotations

from keel.agent.context.masking import apply_masking
from keel.agent.messages import Message, tool_result, user
from keel.agent.protocol import (
    AnyEvent,
    AssistantMessage,
    ContextMasked,
    ContextSummarized,
    SessionFinished,
    ToolFinished,
    ToolStarted,
    UserMessage,
)
from keel.agent.state import SessionState
from keel.tools.editing.patch_format import ADD, DELETE, MOVE, UPDATE

WRITING_TOOLS = ("write_file", "edit_file")

INTERRUPTED_NOTE = "[The user interrupted this turn. Wait for their next message.]"


def repair_unanswered(history: list[Message]) -> None:
    """Answer the last assistant message's tool calls that have no result (after an interrupt or a crash)."""
    last = next(
        (i for i in range(len(history) - 1, -1, -1) if history[i].role == "assistant"), None
    )
    if last is None:
        return
    answered = {m.tool_call_id for m in history[last + 1 :] if m.role == "tool"}
    for call in history[last].tool_calls:
        if call.id not in answered:
            history.append(tool_result(call, "Interrupted before it finished."))


def mark_interrupted(history: list[Message]) -> None:
    repair_unanswered(history)
    history.append(user(INTERRUPTED_NOTE))


def restore_state(state: SessionState, events: list[AnyEvent]) -> None:
    """Apply logged events to a fresh state: history, usage, and the counters of the last task."""
    for event in events:
        if isinstance(event, UserMessage) and event.origin == "keel":
            state.history.append(user(event.text))
        elif isinstance(event, UserMessage):
            state.start_task(user(event.text))
        elif isinstance(event, AssistantMessage):
            message = Message(role="assistant", content=event.text, tool_calls=event.tool_calls)
            state.record(message, event.usage, event.cost)
            if event.tool_calls:
                state.steps += 1
        elif isinstance(event, ToolFinished):
            call = next(
                (c for m in reversed(state.history) for c in m.tool_calls if c.id == event.call_id),
                None,
            )
            if call is not None:
                state.history.append(tool_result(call, event.output))
        elif isinstance(event, ContextMasked):
            apply_masking(state, event.masked_upto)
        elif isinstance(event, ContextSummarized):
            state.apply_summary(event.summary, event.kept_messages)
        elif isinstance(event, SessionFinished) and event.status == "interrupted":
            mark_interrupted(state.history)
    repair_unanswered(state.history)
    state.restore_call_counter()


def written_paths(events: list[AnyEvent]) -> set[str]:
    """Every path a logged write_file, edit_file or apply_patch call set out to change, as the model wrote it."""
    paths: set[str] = set()
    for event in events:
        if not isinstance(event, ToolStarted):
            continue
        if event.name in WRITING_TOOLS and isinstance(event.arguments.get("path"), str):
            paths.add(event.arguments["path"])
        elif event.name == "apply_patch" and isinstance(event.arguments.get("patch"), str):
            for line in event.arguments["patch"].splitlines():
                for directive in (ADD, DELETE, UPDATE, MOVE):
                    if line.startswith(directive):
                        paths.add(line[len(directive) :].strip())
    return paths
