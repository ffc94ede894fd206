"""The protocol between the core and its front ends: ops go in, events come out, nothing else crosses."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


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


class UserPrompt(Model):
    type: Literal["user_prompt"] = "user_prompt"
    text: str


class Continue(Model):
    """Go on with the current task without a new message (after a budget stop, a crash or an interrupt)."""

    type: Literal["continue"] = "continue"


class Interrupt(Model):
    type: Literal["interrupt"] = "interrupt"


ApprovalDecision = Literal["allow_once", "allow_session", "deny"]


class Approve(Model):
    type: Literal["approve"] = "approve"
    call_id: str
    decision: ApprovalDecision


class Compact(Model):
    """Ask for a summary of the context now (the TUI's /compact)."""

    type: Literal["compact"] = "compact"


class SetBudget(Model):
    type: Literal["set_budget"] = "set_budget"
    budget: int | None


class Shutdown(Model):
    type: Literal["shutdown"] = "shutdown"


Op = Annotated[
    UserPrompt | Continue | Interrupt | Approve | Compact | SetBudget | Shutdown,
    Field(discriminator="type"),
]


# ---------------------------------------------------------------- events (core -> front ends)


class Event(Model):
    ts: float = Field(default_factory=time.time)


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


class UserMessage(Event):
    """A message to the model in the user's turn: the user's prompt, or keel's correction of a bad reply."""

    type: Literal["user.message"] = "user.message"
    text: str
    origin: Literal["user", "keel"] = "user"


class AssistantDelta(Event):
    type: Literal["assistant.delta"] = "assistant.delta"
    text: str


class AssistantMessage(Event):
    type: Literal["assistant.message"] = "assistant.message"
    text: str
    tool_calls: list[ToolCall] = []
    usage: TokenUsage = TokenUsage()
    cost: float | None = None


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


class ToolFinished(Event):
    type: Literal["tool.finished"] = "tool.finished"
    call_id: str
    name: str
    ok: bool
    output: str
    diff: str | None = None
    duration_ms: int = 0


class ContextSummarized(Event):
    type: Literal["context.summarized"] = "context.summarized"
    tokens_before: int
    tokens_after: int
    summary: str
    kept_messages: int = 0
    reason: str = "threshold"


class ContextMasked(Event):
    """Old tool outputs were replaced by one-line placeholders (the cheap stage before summarizing)."""

    type: Literal["context.masked"] = "context.masked"
    masked_upto: int
    masked: int
    tokens_before: int
    tokens_after: int


class BudgetUpdated(Event):
    type: Literal["budget.updated"] = "budget.updated"
    used: int
    budget: int | None
    context_tokens: int = 0
    context_window: int = 0


class Error(Event):
    type: Literal["error"] = "error"
    error_class: str
    message: str
    fatal: bool = False
    detail: str = ""


FinishStatus = Literal[
    "completed", "budget_exhausted", "max_steps", "loop_detected", "error", "interrupted"
]


class SessionFinished(Event):
    """Ends one task; an interactive session may take another prompt after it."""

    type: Literal["session.finished"] = "session.finished"
    status: FinishStatus
    final_message: str
    usage: TokenUsage
    steps: int
    cost: float | None = None
    reason: str = ""


AnyEvent = Annotated[
    SessionStarted
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
    | BudgetUpdated
    | Error
    | SessionFinished,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[AnyEvent] = TypeAdapter(AnyEvent)
OP_ADAPTER: TypeAdapter[Op] = TypeAdapter(Op)


def parse_event(line: str | bytes) -> AnyEvent:
    """Read one event back from its JSON line (session logs, stream-json output)."""
    return EVENT_ADAPTER.validate_json(line)
