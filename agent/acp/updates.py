"""keel's events as ACP session updates, live and when a loaded session's history is replayed."""

from __future__ import annotations

from pathlib import Path

from acp.schema import (
    AgentMessageChunk,
    PermissionOption,
    StopReason,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolCallUpdate,
    Usage,
    UsageUpdate,
    UserMessageChunk,
)

from keel.agent.acp.tool_calls import (
    ToolContent,
    diff_contents,
    raw_input,
    text_content,
    tool_kind,
    tool_locations,
    tool_title,
)
from keel.agent.core.protocol import (
    AnyEvent,
    ApprovalDecision,
    ApprovalRequested,
    AssistantDelta,
    AssistantMessage,
    BudgetUpdated,
    Error,
    FinishStatus,
    TaskFinished,
    TokenUsage,
    ToolFinished,
    ToolStarted,
    UserMessage,
)

SessionUpdate = (
    UserMessageChunk | AgentMessageChunk | ToolCallStart | ToolCallProgress | UsageUpdate
)

STOP_REASONS: dict[FinishStatus, StopReason] = {
    "completed": "end_turn",
    "interrupted": "cancelled",
    "budget_exhausted": "max_tokens",
    "max_steps": "max_turn_requests",
    "loop_detected": "max_turn_requests",
}
_SAID_BY_STOP_REASON = ("completed", "interrupted", "error")
_FINISHED: dict[str, ToolCallStatus] = {
    "ok": "completed",
    "unchanged": "completed",
    "error": "failed",
    "denied": "failed",
}

# ACP's option ids are keel's approval decisions, so an answer maps back without a table
PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(
        option_id="allow_session", name="Always allow in this session", kind="allow_always"
    ),
    PermissionOption(option_id="deny", name="Reject", kind="reject_once"),
]


def stop_reason(status: FinishStatus) -> StopReason | None:
    """ACP's stop reason for how a keel task finished; None for an error (the prompt fails with it)."""
    return STOP_REASONS.get(status)


def decision_of(option_id: str | None) -> ApprovalDecision:
    """keel's approval decision for the option the client chose (none: the turn was cancelled)."""
    if option_id == "allow_once":
        return "allow_once"
    return "allow_session" if option_id == "allow_session" else "deny"


def prompt_usage(usage: TokenUsage) -> Usage:
    return Usage(
        total_tokens=usage.total_tokens,
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        cached_read_tokens=usage.cached_tokens or None,
    )


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


class Translator:
    """Turns one session's events into updates; it remembers the text streamed of the current reply."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.streamed = ""  # the text of the reply being streamed, sent as chunks so far

    def updates(self, event: AnyEvent, replay: bool = False) -> list[SessionUpdate]:
        """The updates one event makes; `replay` is a loaded session's log (no deltas, no usage)."""
        if isinstance(event, AssistantDelta):
            self.streamed += event.text
            return [
                AgentMessageChunk(session_update="agent_message_chunk", content=_text(event.text))
            ]
        if isinstance(event, AssistantMessage):
            return self._reply(event.text)
        if isinstance(event, UserMessage):
            return self._user(event, replay)
        if isinstance(event, ToolStarted):
            return [self._tool_start(event)]
        if isinstance(event, ToolFinished):
            return [self._tool_finish(event)]
        if isinstance(event, BudgetUpdated) and event.context_window and not replay:
            return [
                UsageUpdate(
                    session_update="usage_update",
                    used=event.context_tokens,
                    size=event.context_window,
                )
            ]
        if isinstance(event, Error) and not event.fatal and not replay:
            return self._reply(f"\n\n_keel: {event.error_class}: {event.message}_\n\n")
        if isinstance(event, TaskFinished) and event.status not in _SAID_BY_STOP_REASON:
            return self._reply(f"\n\n_keel stopped ({event.status}): {event.reason}_")
        return []

    def tool_call(self, event: ApprovalRequested) -> ToolCallUpdate:
        """The call a permission request is about, as ACP describes it."""
        return ToolCallUpdate(
            tool_call_id=event.call_id,
            title=tool_title(event.name, event.arguments),
            kind=tool_kind(event.name),
            status="pending",
            locations=tool_locations(self.root, event.name, event.arguments) or None,
            raw_input=raw_input(event.arguments),
        )

    def _reply(self, text: str) -> list[SessionUpdate]:
        """A finished reply: only what its deltas did not already stream."""
        streamed, self.streamed = self.streamed, ""
        rest = text[len(streamed) :] if text.startswith(streamed) else ""
        if not rest.strip():
            return []
        return [AgentMessageChunk(session_update="agent_message_chunk", content=_text(rest))]

    def _user(self, event: UserMessage, replay: bool) -> list[SessionUpdate]:
        """The user's prompts are shown on replay only (live, the client shows what it sent)."""
        self.streamed = ""
        if not replay or event.origin != "user":
            return []
        return [UserMessageChunk(session_update="user_message_chunk", content=_text(event.text))]

    def _tool_start(self, event: ToolStarted) -> ToolCallStart:
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=event.call_id,
            title=tool_title(event.name, event.arguments),
            kind=tool_kind(event.name),
            status="pending",
            locations=tool_locations(self.root, event.name, event.arguments) or None,
            raw_input=raw_input(event.arguments),
        )

    def _tool_finish(self, event: ToolFinished) -> ToolCallProgress:
        self.streamed = ""
        content: list[ToolContent] = []
        if event.diff and event.status == "ok":
            content.extend(diff_contents(self.root, event.diff))
        if event.output:
            content.append(text_content(event.output))
        return ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=event.call_id,
            status=_FINISHED[event.status],
            content=content or None,
            raw_output={"status": event.status, "output": event.output},
        )

    @staticmethod
    def running(call_id: str) -> ToolCallProgress:
        """A call the person allowed is running now."""
        return ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id, status="in_progress"
        )
