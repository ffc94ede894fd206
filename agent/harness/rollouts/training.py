"""Training records from a session log alone: one per model call (step-wise trainers: SkyRL, TRL), and the
append-only runs of calls as one sequence with a response mask (verl's AgentLoopOutput).

A record's role is `agent` (the policy's own turn), `self_summary` (its summarization call) or `aux` (a call of
a subagent's child session, whose log lies beside the parent's). The summary chain's segment of a call is the
number of self-summaries before it: a summary call closes its segment, as in the ATIF export.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from keel.agent.core.api.sessions import read_events
from keel.agent.core.protocol import (
    AnyEvent,
    AssistantMessage,
    ContextSummarized,
    SessionStarted,
    SubagentStarted,
    TaskFinished,
)
from keel.agent.harness.rollouts.call_tokens import CallTokens, calls_tokens
from keel.agent.harness.rollouts.reward import Reward

Role = Literal["agent", "self_summary", "aux"]
StopReason = Literal["stop", "length", "tool_calls", "interrupted", "budget", "error"]

# how a rollout that did not complete ends its last call; "completed" (and a verdict-less failure of the
# verifier, which is not the agent's) keep the call's own reason. A detected loop or a
# timeout is a limit, like a budget.
ENDINGS: dict[str, StopReason] = {
    "interrupted": "interrupted",
    "budget_exhausted": "budget",
    "max_steps": "budget",
    "loop_detected": "budget",
    "timed_out": "budget",
    "error": "error",
}
FINISHES: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
}


class TrainingRecord(BaseModel):
    """One model call as a training sample: what the model saw and sampled, and what the rollout earned."""

    model_config = ConfigDict(extra="forbid")

    session_id: str
    call: int  # the call's index among its session's model calls (CallTokens.index)
    role: Role
    segment: int
    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float] | None  # one per completion id, as the server sent them
    loss_mask: list[int]  # one per completion id: 1, every one was sampled by the model
    context_reset: bool
    policy_version: str | None
    stop_reason: StopReason
    reward: Reward | None = None  # the rollout's, shared by every call of it
    advantage: float | None = None


class TrainingSequence(BaseModel):
    """Calls whose prompts extend append-only, as one sequence: the first call's prompt, then everything after
    it, `response_mask` 1 where the model sampled the token and 0 for tool, user and system tokens, and
    `response_logprobs` aligned (0.0 under mask 0; None when a call has no logprobs). verl's AgentLoopOutput."""

    model_config = ConfigDict(extra="forbid")

    session_id: str
    calls: list[int]
    role: Role
    segment: int
    prompt_ids: list[int]
    response_ids: list[int]
    response_mask: list[int]
    response_logprobs: list[float] | None
    policy_versions: list[str | None]
    stop_reason: StopReason
    reward: Reward | None = None
    advantage: float | None = None

    @property
    def num_turns(self) -> int:
        return len(self.calls)


def log_status(events: Sequence[AnyEvent]) -> str:
    """How the log's last task ended: its `session.finished` status, `interrupted` when the log stops before one
    (a killed or aborted run)."""
    finished = [event for event in events if isinstance(event, TaskFinished)]
    return finished[-1].status if finished else "interrupted"


def _own_reason(event: AssistantMessage | ContextSummarized, tokens: CallTokens) -> StopReason:
    """The call's reason as the server sent it; a log without it: tool calls, or a stop."""
    if tokens.finish_reason in FINISHES:
        return FINISHES[tokens.finish_reason]
    if isinstance(event, AssistantMessage) and event.tool_calls:
        return "tool_calls"
    return "stop"


def session_records(
    events: Sequence[AnyEvent], *, role: Role | None = None, policy_version: str | None = None
) -> list[TrainingRecord]:
    """The records of one session's calls that have tokens, each call's own stop reason (no rollout ending
    applied); `role` overrides every call's (a child session's calls are `aux`)."""
    session_id = next((e.session_id for e in events if isinstance(e, SessionStarted)), "")
    model_calls = [e for e in events if isinstance(e, AssistantMessage | ContextSummarized)]
    segments, segment = [], 0
    for event in model_calls:
        segments.append(segment)
        segment += isinstance(event, ContextSummarized)
    calls = calls_tokens(events)
    if calls and calls[-1].index >= len(model_calls):
        raise ValueError("call_tokens counts model calls differently from the log's events")
    return [
        TrainingRecord(
            session_id=session_id,
            call=tokens.index,
            role=role or tokens.role,
            segment=segments[tokens.index],
            prompt_ids=tokens.prompt_ids,
            completion_ids=tokens.completion_ids,
            logprobs=tokens.logprobs,
            loss_mask=[1] * len(tokens.completion_ids),
            context_reset=tokens.context_reset,
            policy_version=tokens.policy_version or policy_version,
            stop_reason=_own_reason(model_calls[tokens.index], tokens),
        )
        for tokens in calls
    ]


def _children(events: Sequence[AnyEvent]) -> list[tuple[str, int]]:
    """Each subagent's child session id, with the parent's segment when it started."""
    children, segment = [], 0
    for event in events:
        if isinstance(event, ContextSummarized):
            segment += 1
        elif isinstance(event, SubagentStarted):
            children.append((event.child_session_id, segment))
    return children


def training_records(
    events: Sequence[AnyEvent],
    *,
    reward: Reward | None = None,
    advantage: float | None = None,
    status: str | None = None,
    policy_version: str | None = None,
    sessions: Path | None = None,
) -> list[TrainingRecord]:
    """A rollout's records, call by call in log order: its last call's stop reason from how it ended (`status`,
    by default the log's), every one with the rollout's reward. With `sessions` (the folder of the logs), each
    subagent's calls follow as `aux`, in the parent's segment at the time, after the parent's."""
    records = session_records(events, policy_version=policy_version)
    ending = ENDINGS.get(status or log_status(events))
    if records and ending is not None:
        records[-1].stop_reason = ending
    for child_id, segment in _children(events) if sessions is not None else []:
        log = sessions / f"{child_id}.jsonl" if sessions else None
        if log is not None and log.is_file():
            child = session_records(read_events(log), role="aux", policy_version=policy_version)
            records += [record.model_copy(update={"segment": segment}) for record in child]
    for record in records:
        record.reward, record.advantage = reward, advantage
    return records


def log_training_records(
    session_log: Path,
    *,
    reward: Reward | None = None,
    advantage: float | None = None,
    status: str | None = None,
    policy_version: str | None = None,
) -> list[TrainingRecord]:
    """The records of a session log file, its subagents' calls (logs beside it) included as `aux`."""
    return training_records(
        read_events(session_log),
        reward=reward,
        advantage=advantage,
        status=status,
        policy_version=policy_version,
        sessions=session_log.parent,
    )


def _extends(run: list[TrainingRecord], record: TrainingRecord) -> bool:
    last = run[-1]
    return (
        not record.context_reset
        and record.session_id == last.session_id
        and record.role == last.role
        and record.segment == last.segment
        and record.call == last.call + 1
    )


def _sequence(run: list[TrainingRecord]) -> TrainingSequence:
    """One append-only run: each call's new prompt tokens (mask 0), then its completion (mask 1)."""
    first = run[0]
    ids, mask = list(first.completion_ids), [1] * len(first.completion_ids)
    with_logprobs = all(record.logprobs is not None for record in run)
    logprobs = list(first.logprobs or [])
    seen = len(first.prompt_ids) + len(first.completion_ids)
    for record in run[1:]:
        added = record.prompt_ids[seen:]
        ids += added + record.completion_ids
        mask += [0] * len(added) + [1] * len(record.completion_ids)
        logprobs += [0.0] * len(added) + list(record.logprobs or [])
        seen = len(record.prompt_ids) + len(record.completion_ids)
    return TrainingSequence(
        session_id=first.session_id,
        calls=[record.call for record in run],
        role=first.role,
        segment=first.segment,
        prompt_ids=first.prompt_ids,
        response_ids=ids,
        response_mask=mask,
        response_logprobs=logprobs if with_logprobs else None,
        policy_versions=[record.policy_version for record in run],
        stop_reason=run[-1].stop_reason,
        reward=first.reward,
        advantage=first.advantage,
    )


def training_sequences(records: Sequence[TrainingRecord]) -> list[TrainingSequence]:
    """The records as sequences: consecutive calls of one session, role and segment join while each prompt
    extends the previous call's prompt and completion exactly; any reset (a summary, a masking pass, a call
    without tokens between) starts the next."""
    runs: list[list[TrainingRecord]] = []
    for record in records:
        if runs and _extends(runs[-1], record):
            runs[-1].append(record)
        else:
            runs.append([record])
    return [_sequence(run) for run in runs]
