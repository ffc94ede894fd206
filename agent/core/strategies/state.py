"""The part of a session's state that only the strategies read, folded from events like the rest of it
(agent/core/fold.py calls `apply_to_strategy`), so a resumed session rebuilds it from its log."""

from __future__ import annotations

from dataclasses import dataclass

from keel.agent.core.frozen import replaced
from keel.agent.core.protocol import (
    AnyEvent,
    AssistantMessage,
    ToolFinished,
    ToolStarted,
    UserMessage,
    VerificationFinished,
)
from keel.agent.core.verification.changes import changed_paths


@dataclass(frozen=True)
class StrategyState:
    """What a strategy decides from: how the task went so far and what keel last asked the model."""

    nudged: bool = False  # this task had its nudge before ending with nothing changed
    answer_requested: bool = (
        False  # keel asked for the answer: the next reply is asked without tools
    )
    task_tools_ok: frozenset[str] = frozenset()  # tools that ran and succeeded in this task
    task_edited: bool = False  # a tool changed a file in this task (its result carries a diff)
    last_ran_ok: bool = False  # the session's last call (state.repeated_call) ran and succeeded
    task_changed: frozenset[str] = (
        frozenset()
    )  # the files this task's diffs name (agent/core/verification)
    verifications: int = 0  # keel's checks of this task's changes so far
    files_just_given: bool = (
        False  # keel gave the project's files and the model has not replied yet
    )
    answered_files: bool = False  # the model's last reply was its answer to the project's files
    # that answer could not be used and keel said why: the next call asks for it again, as the same one call
    files_asked_again: bool = False
    # keel's corrections of answers to the project's files since it last gave them
    answers_corrected: int = 0

    @property
    def files_call(self) -> bool:
        """The next call is edit first's one call: the project's files just given, or asked for again."""
        return self.files_just_given or self.files_asked_again


def apply_to_strategy(part: StrategyState, event: AnyEvent, same_call: bool) -> StrategyState:
    """The strategy's part after `event`; `same_call`: a tool.started repeats the session's last call."""
    match event:
        case UserMessage(origin="user"):  # a new task
            return replaced(
                part,
                nudged=False,
                task_tools_ok=frozenset(),
                task_edited=False,
                last_ran_ok=False,
                task_changed=frozenset(),
                verifications=0,
                files_just_given=False,
                files_asked_again=False,
                answers_corrected=0,
            )
        case UserMessage(purpose="status"):  # a status line kept in the history: nothing asked
            return part
        case UserMessage():  # keel's correction, nudge, context or request for the answer
            asked_again = event.purpose == "correction" and part.answered_files
            return replaced(
                part,
                nudged=part.nudged or event.purpose == "nudge",
                answer_requested=event.purpose == "answer",
                files_just_given=event.purpose == "context",
                files_asked_again=asked_again,
                answers_corrected=part.answers_corrected + 1 if asked_again else 0,
            )
        case AssistantMessage():
            if part.answer_requested or part.files_just_given or part.answered_files:
                return replaced(
                    part,
                    answer_requested=False,
                    files_just_given=False,
                    files_asked_again=False,
                    answered_files=part.files_just_given or part.files_asked_again,
                )
            return part
        case ToolStarted():
            return replaced(part, last_ran_ok=part.last_ran_ok and same_call)
        case ToolFinished():
            ok = event.ok
            return replaced(
                part,
                last_ran_ok=ok,
                task_tools_ok=part.task_tools_ok | {event.name} if ok else part.task_tools_ok,
                task_edited=part.task_edited or (ok and bool(event.diff)),
                task_changed=part.task_changed | changed_paths(event.diff)
                if ok
                else part.task_changed,
            )
        case VerificationFinished():
            return replaced(part, verifications=part.verifications + 1)
    return part
