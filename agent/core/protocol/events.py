"""Events: what the core tells its front ends, and what a session's log holds (a session's state is their fold)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, computed_field, field_validator, model_validator

from keel.agent.core.protocol.base import Event, FinishStatus, Model, TokenUsage, ToolCall
from keel.agent.core.protocol.error_classes import ErrorClass, error_class_of
from keel.agent.core.protocol.feature_events import (
    HookRan,
    ImageAttached,
    PlanModeChanged,
    SubagentFinished,
    SubagentStarted,
    TodoUpdated,
)
from keel.agent.core.protocol.ops import ApprovalDecision

# Totals the fold derives (keel.agent.core.fold): whoever makes an event leaves them out; the session publishes (and
# logs) it with its state's totals after it. Nothing reads them back: a resume folds its own.
DERIVED_TOTALS = frozenset({"task_usage", "session_usage"})


class SessionStarted(Event):
    type: Literal["session.started"] = "session.started"
    session_id: str
    model: str
    cwd: str
    context_window: int
    tool_protocol: Literal["native", "text"]
    approval: str
    budget: int | None = None
    resumed: bool = False
    sandbox: str = ""  # what confines run_command: "bubblewrap", "landlock (ABI 6: …)", …
    profile: Literal["small", "full"] | None = (
        None  # how keel talks to the model (agent/core/profile.py)
    )
    profile_reason: str = (
        ""  # why: "its server (…) reports 1.5B parameters", "chosen by --profile", …
    )


class TurnStarted(Event):
    """A turn begins: a task (a prompt, or Continue) or a compaction; `turn_id` is the op's id."""

    type: Literal["turn.started"] = "turn.started"
    kind: Literal["task", "compact"] = "task"


class TurnAborted(Event):
    """A turn ended early: it answers an Interrupt (the turn's id), or on resume closes the turn a dead process
    left open (`crashed`)."""

    type: Literal["turn.aborted"] = "turn.aborted"
    reason: Literal["interrupted", "crashed"] = "interrupted"


class FileSeen(Model):
    """A file as a tool call (or keel's undo) left it: its stamp when the agent last read or wrote it, or no
    stamp (it is gone: forgotten); `changed` when the agent changed it. The "read it before you write it"
    rule checks these, so a resumed session keeps them."""

    path: str
    mtime_ns: int | None = None
    size: int = 0
    changed: bool = False


class UserMessage(Event):
    """A message to the model in the user's turn: the user's prompt, or one keel wrote (`purpose` says why)."""

    type: Literal["user.message"] = "user.message"
    text: str
    origin: Literal["user", "keel"] = "user"
    # keel's own messages: a correction of a reply it could not use, a nudge before it ends the task, a
    # small project's files given to a small model with the task, or a request for the answer (a small model
    # repeating a read it has; the next reply is asked without tools), or the failures keel's checks found in
    # the files changed before the task could end (agent/core/verification), or the status line of a call
    # kept in the history (append-only prompts: agent/core/context/manager.py)
    purpose: (
        Literal["correction", "nudge", "context", "answer", "verification", "status"] | None
    ) = None
    seen: list[FileSeen] = Field(
        default_factory=list
    )  # context: the files given with it, marked read


class AssistantDelta(Event):
    type: Literal["assistant.delta"] = "assistant.delta"
    text: str


class TurnTokens(Model):
    """A model call's exact tokens as the server gave them (`record_tokens`), for training on the sequence
    the model saw and wrote; a call whose tokens the server did not return has `missing` saying so,
    and no ids: they are never guessed.

    As logged, a prompt holds only the ids after those it shares with the previous logged call's prompt and
    completion: `prompt_reuses` is how many leading ids of that sequence it starts with. keel ends each
    request with a fresh status line (unless append-only prompts keep it), so a prompt reuses the previous one
    up to its status line; one that adds to the previous prompt and completion exactly reuses all of them. `prompt_reuses` None: the prompt is
    whole (the session's first call, a summary call, the call after a summary, one that shares less than half
    of the previous prompt). keel.agent.harness.rollouts.call_tokens rebuilds every call's whole prompt from
    the log. The direct client returns a prompt already cut against the session's last logged call; through
    litellm or from the embedded model it comes whole and the session cuts it as it logs it
    (keel.agent.core.model.prompt_chain).

    `finish_reason` is the server's for this call, as sent ("stop", "length", "tool_calls", ...);
    `policy_version` the `X-Policy-Version` header of the server's response over the direct client (a trainer's
    server sets it to the version of the weights that sampled the reply); None when it sent none, and through
    litellm or from the embedded model.
    """

    prompt_token_ids: list[int] | None = None
    prompt_reuses: int | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None  # one per completion token
    missing: str = ""
    finish_reason: str | None = None
    policy_version: str | None = None


class AssistantMessage(Event):
    """One model reply; `usage` is this call's, the totals are the task's and the session's after it."""

    type: Literal["assistant.message"] = "assistant.message"
    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    cost: float | None = None
    task_usage: TokenUsage = Field(default_factory=TokenUsage)
    session_usage: TokenUsage = Field(default_factory=TokenUsage)
    tokens: TurnTokens | None = None  # with record_tokens only


class ModelRetry(Event):
    type: Literal["model.retry"] = "model.retry"
    attempt: int
    max_attempts: int
    error_class: str
    message: str
    delay: float


class ModelProgress(Event):
    """The local model getting ready (assembling its file, loading it) or reading a long prompt (`done` of
    `total` tokens). Published, not logged: it says how a call is going, not what happened in the session."""

    type: Literal["model.progress"] = "model.progress"
    stage: Literal["assembling", "loading", "ready", "prompt"]
    done: int = 0
    total: int = 0
    message: str = ""


class ApprovalRequested(Event):
    type: Literal["approval.requested"] = "approval.requested"
    call_id: str
    name: str
    arguments: dict[str, Any]
    reason: str


class ApprovalDecided(Event):
    """A person's answer to approval.requested; `allow_session` allows the tool for the rest of the session."""

    type: Literal["approval.decided"] = "approval.decided"
    call_id: str
    name: str
    decision: ApprovalDecision


class ToolStarted(Event):
    type: Literal["tool.started"] = "tool.started"
    call_id: str
    name: str
    arguments: dict[str, Any]


ToolStatus = Literal["ok", "unchanged", "error", "denied"]
SUCCEEDED: frozenset[str] = frozenset({"ok", "unchanged"})  # unchanged: it ran, but nothing changed


class ToolFinished(Event):
    """`status` says how the call ended (unchanged: it succeeded but changed nothing, as a write of the
    content a file already has; denied: the approval policy or the person refused it); `seen` the files it
    read or changed. `ok` (succeeded: ok or unchanged) is derived from `status`, shown but not stored."""

    type: Literal["tool.finished"] = "tool.finished"
    call_id: str
    name: str
    status: ToolStatus = (
        "ok"  # before the output: a line too long to load whole is read from its head
    )
    output: str
    diff: str | None = None
    duration_ms: int = 0
    seen: list[FileSeen] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _from_ok(cls, data: Any) -> Any:
        """A log written before `status` has only `ok`; one written before it was dropped has both."""
        if isinstance(data, dict) and "ok" in data:
            data = dict(data)
            ok = data.pop("ok")
            data.setdefault("status", "ok" if ok else "error")
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        return self.status in SUCCEEDED


class ContextSummarized(Event):
    """The older history was replaced by a summary; `usage` is the summarization call's."""

    type: Literal["context.summarized"] = "context.summarized"
    tokens_before: int
    tokens_after: int
    summary: str
    kept_messages: int = 0
    reason: str = "threshold"
    usage: TokenUsage = Field(default_factory=TokenUsage)
    cost: float | None = None
    task_usage: TokenUsage = Field(default_factory=TokenUsage)
    session_usage: TokenUsage = Field(default_factory=TokenUsage)
    tokens: TurnTokens | None = None  # the summarization call's, with record_tokens only


class ContextMasked(Event):
    """Old tool outputs were replaced by one-line placeholders (the cheap stage before summarizing)."""

    type: Literal["context.masked"] = "context.masked"
    masked_upto: int
    masked: int
    tokens_before: int
    tokens_after: int


class ToolProtocolChanged(Event):
    """The session now calls tools this way (the provider rejected native tools)."""

    type: Literal["tool_protocol.changed"] = "tool_protocol.changed"
    tool_protocol: Literal["native", "text"]
    reason: str = ""


class ProfileChanged(Event):
    """The session talks to its model with the small-model profile from now on: it failed at calls early."""

    type: Literal["profile.changed"] = "profile.changed"
    profile: Literal["small"] = "small"
    reason: str = ""


class VerificationCheck(Model):
    """One check of the files a task changed: syntax, lint, what other files import from them, or the project's
    tests; `output` is a failure's output, capped."""

    name: Literal["syntax", "lint", "imports", "tests"]
    status: Literal["passed", "failed", "skipped"]
    summary: str
    output: str = ""


class VerificationFinished(Event):
    """keel checked the files the task changed before letting it end: `round` counts the task's checks,
    `passed` whether none failed, `final` whether the task ends with this outcome (passed, or out of retries)."""

    type: Literal["verification.finished"] = "verification.finished"
    files: list[str]
    checks: list[VerificationCheck]
    passed: bool
    round: int = 1
    final: bool = True


class BudgetSet(Event):
    """A budget grant: `budget` is the running task's, `default_budget` the next tasks' (None: an estimate,
    or no budget when estimates are off)."""

    type: Literal["budget.set"] = "budget.set"
    budget: int | None
    default_budget: int | None = None
    reason: Literal["requested", "estimate", "resume"] = "requested"


class BudgetUpdated(Event):
    """After each model call: `used` of the task's `budget`, the context's fill, and the usage totals."""

    type: Literal["budget.updated"] = "budget.updated"
    used: int
    budget: int | None
    context_tokens: int = 0
    context_window: int = 0
    task_usage: TokenUsage = Field(default_factory=TokenUsage)
    session_usage: TokenUsage = Field(default_factory=TokenUsage)


class Error(Event):
    type: Literal["error"] = "error"
    error_class: ErrorClass
    message: str
    fatal: bool = False
    detail: str = ""

    @field_validator("error_class", mode="before")
    @classmethod
    def _closed(cls, value: object) -> object:
        """Logs written before the set was closed name other classes: read them as their closed-set class."""
        return error_class_of(value) if isinstance(value, str) else value


class RestoredFile(Model):
    """One path an undo put back: M reverted, A re-created, D deleted (it did not exist then)."""

    action: Literal["M", "A", "D"]
    path: str


class UndoApplied(Event):
    """keel's own undo (not a command or someone else) changed the workspace: `restored` is the checkpoint
    put back (empty: there was nothing to undo), `files` what changed, `undo_id` the checkpoint that takes
    it back, `named` whether the person named the checkpoint (else: before the last turn). The model's next
    turn is told which files changed."""

    type: Literal["undo.applied"] = "undo.applied"
    restored: str = ""
    undo_id: str = ""
    files: list[RestoredFile] = Field(default_factory=list)
    named: bool = False
    seen: list[FileSeen] = Field(
        default_factory=list
    )  # the agent's stamps of the files it put back


class TaskFinished(Event):
    """Ends one task; an interactive session may take another prompt after it. `usage` is the session's
    total (as `session_usage`), `task_usage` this task's."""

    type: Literal["session.finished"] = "session.finished"
    status: FinishStatus
    final_message: str
    usage: TokenUsage
    steps: int
    cost: float | None = None
    reason: str = ""
    task_usage: TokenUsage = Field(default_factory=TokenUsage)
    session_usage: TokenUsage = Field(default_factory=TokenUsage)


AnyEvent = Annotated[
    SessionStarted
    | TurnStarted
    | TurnAborted
    | UserMessage
    | AssistantDelta
    | AssistantMessage
    | ModelRetry
    | ModelProgress
    | ApprovalRequested
    | ApprovalDecided
    | ToolStarted
    | ToolFinished
    | ContextSummarized
    | ContextMasked
    | ToolProtocolChanged
    | ProfileChanged
    | BudgetSet
    | BudgetUpdated
    | Error
    | UndoApplied
    | VerificationFinished
    | SubagentStarted
    | SubagentFinished
    | HookRan
    | TodoUpdated
    | PlanModeChanged
    | ImageAttached
    | TaskFinished,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[AnyEvent] = TypeAdapter(AnyEvent)


def parse_event(line: str | bytes) -> AnyEvent:
    """Read one event back from its JSON line (session logs, stream-json output)."""
    return EVENT_ADAPTER.validate_json(line)
