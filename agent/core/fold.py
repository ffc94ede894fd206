"""The one way a session's state changes: `apply(state, event)`, a pure function used live and on resume."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from keel.agent.core.frozen import replaced
from keel.agent.core.images.folding import with_image
from keel.agent.core.masked_outputs import mask_history
from keel.agent.core.messages import Message, tool_result, user
from keel.agent.core.protocol import (
    DERIVED_TOTALS,
    AnyEvent,
    ApprovalDecided,
    AssistantMessage,
    BudgetSet,
    ContextMasked,
    ContextSummarized,
    FileSeen,
    ImageAttached,
    PlanModeChanged,
    ProfileChanged,
    SessionStarted,
    SubagentFinished,
    TaskFinished,
    TodoUpdated,
    TokenUsage,
    ToolCall,
    ToolFinished,
    ToolProtocolChanged,
    ToolStarted,
    TurnAborted,
    TurnStarted,
    UndoApplied,
    UserMessage,
)
from keel.agent.core.state import SessionState, call_signature
from keel.agent.core.strategies.state import apply_to_strategy
from keel.prompts import render

INTERRUPTED_NOTE = render("interrupted_note")
UNFINISHED_RESULT = render("unfinished_result")


def apply(state: SessionState, event: AnyEvent) -> SessionState:
    """The state after `event`; depends on nothing else, changes nothing (events that report only, such as
    deltas, retries or budget.updated, leave the state as it is, and so does a result for no known call)."""
    after = _apply_session(state, event)
    same_call = isinstance(event, ToolStarted) and state.repeated_call == after.repeated_call
    part = apply_to_strategy(state.strategy, event, same_call)
    return after if part is state.strategy else replaced(after, strategy=part)


def _apply_session(state: SessionState, event: AnyEvent) -> SessionState:
    """The state after `event`, but for its strategy part."""
    match event:
        case SessionStarted():
            return _started(state, event)
        case TurnStarted():
            return replaced(state, turn_id=event.turn_id, task_open=event.kind == "task")
        case UserMessage(origin="user"):
            return _new_task(state, event.text)
        case UserMessage():  # keel's correction or nudge: a step of its own
            return replaced(
                _saw(state, event.seen),
                history=(*state.history, user(event.text)),
                steps=state.steps + (event.purpose not in ("context", "status")),
                corrections=state.corrections + (event.purpose == "correction"),
                failed_replies=state.failed_replies + (event.purpose == "correction"),
            )
        case AssistantMessage():
            return _assistant(state, event)
        case ToolStarted():
            signature = call_signature(event.name, event.arguments)
            return replaced(state, repeated_call=signature, repeats=state.repeats_of(signature))
        case ToolFinished():
            return _tool_finished(_saw(state, event.seen), event)
        case ApprovalDecided(decision="allow_session"):
            return replaced(state, allowed_for_session=state.allowed_for_session | {event.name})
        case ContextMasked():
            return after_masking(state, event.masked_upto)
        case ContextSummarized():
            after = after_summary(state, event.summary, event.kept_messages)
            return _spend(after, event.usage, event.cost)
        case ToolProtocolChanged():
            return replaced(state, tool_protocol=event.tool_protocol)
        case ProfileChanged():
            return replaced(state, small_profile=True)
        case BudgetSet():
            return replaced(state, budget=event.budget, default_budget=event.default_budget)
        case TurnAborted():
            return _aborted(state, event)
        case TaskFinished():
            return replaced(state, task_open=False)
        case SubagentFinished():  # a child's tokens count against the task's budget
            return _spend(state, event.usage, event.cost)
        case ImageAttached():
            return replaced(state, history=with_image(state.history, event))
        case UndoApplied(files=[_, *_]):  # the model's next turn learns what keel's undo put back
            note = render(
                "undo_restored", files=event.files, restored=event.restored, named=event.named
            )
            return replaced(_saw(state, event.seen), history=(*state.history, user(note)))
        case UndoApplied():
            return _saw(state, event.seen)
        case TodoUpdated():
            return replaced(state, todo=tuple(event.items))
        case PlanModeChanged() if event.active != state.plan_mode:  # the model's next turn is told
            note = render("plan_mode", active=event.active)
            return replaced(state, plan_mode=event.active, history=(*state.history, user(note)))
    return state


def with_totals(event: AnyEvent, after: SessionState) -> AnyEvent:
    """The event as it is published and logged: with the task's and the session's usage in `after`, the state
    it leads to (keel.agent.core.protocol.DERIVED_TOTALS); whoever makes the event leaves them out."""
    if DERIVED_TOTALS <= type(event).model_fields.keys():
        return event.model_copy(
            update={"task_usage": after.task_usage, "session_usage": after.usage}
        )
    return event


def fold(events: Iterable[AnyEvent], state: SessionState) -> SessionState:
    """`state` after every event in order: a session rebuilt from its log."""
    for event in events:
        state = apply(state, event)
    return state


def unanswered_calls(history: Sequence[Message]) -> list[ToolCall]:
    """The last assistant message's tool calls that have no result yet (an interrupt or a crash cut them off)."""
    last = next(
        (i for i in range(len(history) - 1, -1, -1) if history[i].role == "assistant"), None
    )
    if last is None:
        return []
    answered = {m.tool_call_id for m in history[last + 1 :] if m.role == "tool"}
    return [call for call in history[last].tool_calls if call.id not in answered]


def _started(state: SessionState, event: SessionStarted) -> SessionState:
    """A fresh session takes its budget from the start; a resumed one keeps the one its log built."""
    state = replaced(state, session_id=event.session_id, tool_protocol=event.tool_protocol)
    if event.resumed:
        return state
    return replaced(state, budget=event.budget, default_budget=event.budget)


def _new_task(state: SessionState, text: str) -> SessionState:
    """A new prompt: steps, the budget and the loop guard count from zero (a file re-read is no loop)."""
    return replaced(
        state,
        history=(*state.history, user(text)),
        task_prompt=text,
        user_prompts=(*state.user_prompts, text),
        steps=0,
        task_usage=TokenUsage(),
        budget=state.default_budget,
        repeated_call="",
        repeats=0,
        corrections=0,
    )


def _spend(state: SessionState, usage: TokenUsage, cost: float | None) -> SessionState:
    """Count a model call's tokens: the session's totals and the task's."""
    return replaced(
        state,
        usage=state.usage + usage,
        task_usage=state.task_usage + usage,
        cost=state.cost if cost is None else (state.cost or 0.0) + cost,
    )


def _assistant(state: SessionState, event: AssistantMessage) -> SessionState:
    """A reply: history and usage; asking for tools makes it a step; generated call ids are counted."""
    message = Message(role="assistant", content=event.text, tool_calls=list(event.tool_calls))
    prefix = state.call_prefix
    numbers = [
        int(call.id[len(prefix) :])
        for call in event.tool_calls
        if call.id.startswith(prefix) and call.id[len(prefix) :].isdigit()
    ]
    state = replaced(
        state,
        history=(*state.history, message),
        steps=state.steps + 1 if event.tool_calls else state.steps,
        generated_call_ids=max([state.generated_call_ids, *numbers]),
        replies=state.replies + 1,
        corrections=0 if event.tool_calls else state.corrections,
    )
    return _spend(state, event.usage, event.cost)


def _tool_finished(state: SessionState, event: ToolFinished) -> SessionState:
    call = next(
        (c for m in reversed(state.history) for c in m.tool_calls if c.id == event.call_id), None
    )
    if call is None:
        return state
    return replaced(state, history=(*state.history, tool_result(call, event.output)))


def after_masking(state: SessionState, upto: int) -> SessionState:
    """The history with tool outputs before `upto` masked (context.masked; the manager measures it first)."""
    history, _ = mask_history(state.history, state.masked_upto, upto)
    return replaced(
        state, history=history, masked_upto=max(state.masked_upto, upto), epoch=state.epoch + 1
    )


def after_summary(state: SessionState, summary: str, kept: int) -> SessionState:
    """All but the last `kept` messages replaced by the summary (context.summarized, before its call is
    spent; the manager measures it first)."""
    return replaced(
        state,
        history=state.history[len(state.history) - kept :] if kept else (),
        summaries=(*state.summaries, summary),
        masked_upto=0,
        epoch=state.epoch + 1,
    )


def _saw(state: SessionState, seen: Sequence[FileSeen]) -> SessionState:
    """The agent's stamps of the files a call (or an undo) read or changed; a file gone is forgotten."""
    if not seen:
        return state
    stamps, changed = dict(state.read_stamps), set(state.changed_files)
    for file in seen:
        if file.mtime_ns is None:
            stamps.pop(file.path, None)
        else:
            stamps[file.path] = (file.mtime_ns, file.size)
        if file.changed:
            changed.add(file.path)
    return replaced(state, read_stamps=stamps, changed_files=frozenset(changed))


def _aborted(state: SessionState, event: TurnAborted) -> SessionState:
    """Calls cut off get a result; an interrupted task tells the model the user stopped it. The loop guard
    starts over: a call made again after a cut is the cut's doing, not the model going round in circles."""
    repaired = tuple(
        tool_result(call, UNFINISHED_RESULT) for call in unanswered_calls(state.history)
    )
    note = (user(INTERRUPTED_NOTE),) if state.task_open and event.reason == "interrupted" else ()
    return replaced(
        state,
        history=(*state.history, *repaired, *note),
        task_open=False,
        repeated_call="",
        repeats=0,
    )
