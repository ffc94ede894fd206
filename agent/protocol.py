"""The protocol between the core and its front ends: ops go in, events come out, nothing else crosses."""

from __future__ import annotations

import secrets
import time
from typing import Annotated, Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator


class Model(BaseModel):
    """Base for protocol models: strict about unknown fields, so typos fail loudly."""

    model_config = ConfigDict(extra="forbid")


class TokenUsage(Model):
    """Tokens as the provider reports them (or as estimated when it reports none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )


class ToolCall(Model):
    """One call the model asked for; `arguments` is the raw JSON text, validated only at dispatch."""

    id: str
    name: str
    arguments: str = ""


# ---------------------------------------------------------------- ops (front end -> core)


def new_op_id() -> str:
    """A short random id; an op that starts a turn lends it to the turn and to every event of the turn."""
    return secrets.token_hex(6)


class OpBase(Model):
    """Every op has an id, generated unless the front end names it."""

    id: str = Field(default_factory=new_op_id)


class UserPrompt(OpBase):
    type: Literal["user_prompt"] = "user_prompt"
    text: str
    # image files sent with it (relative to the workspace, or absolute)
    images: list[str] = Field(default_factory=list)


class Continue(OpBase):
    """Go on with the current task without a new message (after a budget stop, a crash or an interrupt)."""

    type: Literal["continue"] = "continue"


class Interrupt(OpBase):
    """Stop the running turn (or drop the queued ones); each is answered by `turn.aborted`."""

    type: Literal["interrupt"] = "interrupt"


ApprovalDecision = Literal["allow_once", "allow_session", "deny"]


class Approve(OpBase):
    type: Literal["approve"] = "approve"
    call_id: str
    decision: ApprovalDecision


class Compact(OpBase):
    """Ask for a summary of the context now (the TUI's /compact)."""

    type: Literal["compact"] = "compact"


class SetBudget(OpBase):
    type: Literal["set_budget"] = "set_budget"
    budget: int | None


class Shutdown(OpBase):
    type: Literal["shutdown"] = "shutdown"


class Undo(OpBase):
    """Put the workspace back before its last turn that changed it, or at checkpoint `checkpoint` (an id
    prefix): the TUI's /undo. Queued behind the running turn; answered by undo.applied (or an error)."""

    type: Literal["undo"] = "undo"
    checkpoint: str = ""


class SetPlanMode(OpBase):
    """Enter or leave plan mode (only the read tools run; the model ends with a plan): queued behind the
    running turn, answered by plan_mode.changed."""

    type: Literal["set_plan_mode"] = "set_plan_mode"
    active: bool


Op = Annotated[
    UserPrompt
    | Continue
    | Interrupt
    | Approve
    | Compact
    | SetBudget
    | Shutdown
    | Undo
    | SetPlanMode,
    Field(discriminator="type"),
]


# ---------------------------------------------------------------- events (core -> front ends)


class Event(Model):
    """`turn_id` names the op (and so the turn) that caused the event; "" outside any turn."""

    ts: float = Field(default_factory=time.time)
    turn_id: str = ""


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
        None  # how keel talks to the model (agent/profile.py)
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


class UserMessage(Event):
    """A message to the model in the user's turn: the user's prompt, or one keel wrote (`purpose` says why)."""

    type: Literal["user.message"] = "user.message"
    text: str
    origin: Literal["user", "keel"] = "user"
    # keel's own messages: a correction of a reply it could not use, a nudge before it ends the task, a
    # small project's files given to a small model with the task, or a request for the answer (a small model
    # repeating a read it has; the next reply is asked without tools), or the failures keel's checks found in
    # the files changed before the task could end (agent/verification)
    purpose: Literal["correction", "nudge", "context", "answer", "verification"] | None = None


class AssistantDelta(Event):
    type: Literal["assistant.delta"] = "assistant.delta"
    text: str


class TurnTokens(Model):
    """A model call's exact tokens as the server gave them (`record_tokens`), for training on the sequence
    the model saw and wrote; a call whose tokens the server did not return has `missing` saying so,
    and no ids: they are never guessed."""

    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None  # one per completion token
    missing: str = ""


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


class ToolStarted(Event):
    type: Literal["tool.started"] = "tool.started"
    call_id: str
    name: str
    arguments: dict[str, Any]


ToolStatus = Literal["ok", "unchanged", "error", "denied"]
SUCCEEDED: frozenset[str] = frozenset({"ok", "unchanged"})  # unchanged: it ran, but nothing changed


class ToolFinished(Event):
    """`status` says how the call ended (unchanged: it succeeded but changed nothing, as a write of the
    content a file already has; denied: the approval policy or the person refused it); `ok` is whether
    it succeeded (ok or unchanged), kept for older readers."""

    type: Literal["tool.finished"] = "tool.finished"
    call_id: str
    name: str
    ok: bool = True
    output: str
    diff: str | None = None
    duration_ms: int = 0
    status: ToolStatus = "ok"

    @model_validator(mode="after")
    def _agree(self) -> Self:
        """Either field may be given (a log written before `status` has only `ok`); they must agree."""
        if "status" in self.model_fields_set:
            self.ok = self.status in SUCCEEDED
        else:
            self.status = "ok" if self.ok else "error"
        return self


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


ErrorClass = Literal[
    # the provider's, as it (or litellm) names them
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "BadRequestError",
    "ConflictError",
    "UnprocessableEntityError",
    "ContentPolicyViolationError",
    "RateLimitError",
    "InternalServerError",
    "BadGatewayError",
    "ServiceUnavailableError",
    "Timeout",
    "APIConnectionError",
    "APIError",
    "ContextWindowExceededError",
    "ProviderError",  # any other provider failure
    # the embedded model's
    "ModelWorkerDied",
    "LocalModelUnavailable",
    "LocalModelError",
    # keel's own
    "CheckpointError",
    "McpServerError",  # an MCP server that did not start: its tools are not offered
    "UntrustedConfig",  # an untrusted repository's config keys that would widen permissions, ignored
    "SessionLogError",  # the session log could not be written (a full disk): the session stops
    "InternalError",
]
ERROR_CLASSES: frozenset[str] = frozenset(get_args(ErrorClass))
_ERROR_ALIASES: dict[str, ErrorClass] = {
    "TimeoutError": "Timeout",
    "ConnectionError": "APIConnectionError",
    "ConnectionRefusedError": "APIConnectionError",
    "ConnectionResetError": "APIConnectionError",
    "ContextWindowExceeded": "ContextWindowExceededError",
}


def error_class_of(name: str) -> ErrorClass:
    """The closed-set class for an error's name; a provider class keel does not know is `ProviderError`."""
    if name in ERROR_CLASSES:
        return name  # type: ignore[return-value]
    return _ERROR_ALIASES.get(name, "ProviderError")


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


FinishStatus = Literal[
    "completed", "budget_exhausted", "max_steps", "loop_detected", "error", "interrupted"
]


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


class SessionFinished(Event):
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


class SubagentStarted(Event):
    """The `task` tool started a child session (`child_session_id`, its own log in the store) for a piece of
    work: `agent` names the definition it runs (empty: the general read-only helper), `tools` what it may use,
    `worktree` its own git worktree's path when it has one."""

    type: Literal["subagent.started"] = "subagent.started"
    child_session_id: str
    agent: str = ""
    description: str = ""
    tools: list[str] = Field(default_factory=list)
    worktree: str = ""


class SubagentFinished(Event):
    """A child session ended: its status, its final answer (the `task` call's result) and the tokens it used,
    which count against the parent task's budget."""

    type: Literal["subagent.finished"] = "subagent.finished"
    child_session_id: str
    agent: str = ""
    status: FinishStatus
    final_message: str = ""
    usage: TokenUsage = Field(default_factory=TokenUsage)
    cost: float | None = None
    branch: str = ""  # where a child in its own worktree left its changes


class HookRan(Event):
    """A hook command ran (agent/hooks): at which `hook_event`, for which tool call, how it exited, and whether
    it blocked the call, prompt or stop (`reason`: what the model or the person is told)."""

    type: Literal["hook.ran"] = "hook.ran"
    hook_event: str
    command: str
    tool_name: str = ""
    call_id: str = ""
    exit_code: int | None = None  # None: it did not start or ran out of time
    blocked: bool = False
    reason: str = ""
    duration_ms: int = 0


class TodoItem(Model):
    """One item of the model's checklist (the `todo` tool)."""

    content: str
    status: Literal["pending", "in_progress", "done"] = "pending"


class TodoUpdated(Event):
    """The model wrote its checklist anew (the `todo` tool): `items` is the whole list now."""

    type: Literal["todo.updated"] = "todo.updated"
    call_id: str = ""
    items: list[TodoItem] = Field(default_factory=list)


class PlanModeChanged(Event):
    """The session entered or left plan mode: while `active`, only the read tools run and the model ends
    with a plan; the model is told of the change in its next turn."""

    type: Literal["plan_mode.changed"] = "plan_mode.changed"
    active: bool


class ImageAttached(Event):
    """An image given to the model: with the person's prompt (`origin` user) or read by read_file (`call_id`).
    `data` is its base64 bytes; empty when it was not sent, and `note` then says why (a model that does not
    take images, a file too large), which the model is told instead."""

    type: Literal["image.attached"] = "image.attached"
    name: str
    origin: Literal["user", "tool"] = "user"
    call_id: str = ""
    media_type: str = ""
    size: int = 0
    sha256: str = ""
    data: str = Field(default="", repr=False)
    note: str = ""


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
    | SessionFinished,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[AnyEvent] = TypeAdapter(AnyEvent)
OP_ADAPTER: TypeAdapter[Op] = TypeAdapter(Op)


def parse_event(line: str | bytes) -> AnyEvent:
    """Read one event back from its JSON line (session logs, stream-json output)."""
    return EVENT_ADAPTER.validate_json(line)
