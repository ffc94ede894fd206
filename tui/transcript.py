"""What a session's transcript holds, built from its events alone; the widgets only render it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from keel.tui import format as fmt

AgentStatus = Literal[
    "new", "idle", "running", "approval", "done", "stopped", "interrupted", "error"
]
ToolState = Literal["running", "approval", "ok", "unchanged", "failed", "denied"]
NoticeLevel = Literal["info", "warning", "error", "success"]
ChangeKind = Literal["added", "updated", "delta", "stats", "approval", "todo", "plan"]

_FINISHED_STATUS: dict[str, AgentStatus] = {
    "completed": "done",
    "interrupted": "interrupted",
    "error": "error",
    "budget_exhausted": "stopped",
    "max_steps": "stopped",
    "loop_detected": "stopped",
}

_TOOL_STATE: dict[str, ToolState] = {
    "ok": "ok",
    "unchanged": "unchanged",
    "error": "failed",
    "denied": "denied",
}


@dataclass
class UserEntry:
    text: str
    origin: Literal["user", "keel"] = "user"


@dataclass
class AssistantEntry:
    text: str
    streaming: bool = False


@dataclass
class ToolEntry:
    call_id: str
    name: str
    arguments: dict[str, Any]
    state: ToolState = "running"
    output: str = ""
    diff: str | None = None
    duration_ms: int = 0


@dataclass
class NoticeEntry:
    text: str
    level: NoticeLevel = "info"


Entry = UserEntry | AssistantEntry | ToolEntry | NoticeEntry


@dataclass(frozen=True)
class Change:
    """What one event changed: an entry added or updated, streamed text, the stats, an approval."""

    kind: ChangeKind
    index: int = -1
    text: str = ""


@dataclass
class ChildAgent:
    """A subagent the session's `task` tool started: its own session, shown under its parent in the list."""

    session_id: str
    name: str
    description: str
    status: AgentStatus = "running"
    tokens: int = 0


@dataclass
class SessionStats:
    """The figures the session list and the status bar show."""

    model: str
    budget: int | None = None
    session_id: str = ""
    approval: str = ""
    status: AgentStatus = "new"
    # the task's tokens, which its budget limits (they count from zero at each prompt)
    used: int = 0
    session_tokens: int = 0  # every task's of the session together
    context_tokens: int = 0
    context_window: int = 0
    cost: float | None = None
    steps: int = 0
    # what a local model is busy with before it answers (loading, reading the prompt)
    activity: str = ""
    children: list[ChildAgent] = field(default_factory=list)  # subagents, oldest first
    plan_mode: bool = False  # only the read tools run; the model answers with a plan


@dataclass
class Transcript:
    """Entries in order plus the session's stats; `apply` folds one event in and says what changed."""

    stats: SessionStats
    entries: list[Entry] = field(default_factory=list)
    _streaming: int | None = None
    _tools: dict[str, int] = field(default_factory=dict)
    _assembled: bool = False
    _fatal: str = ""  # the last fatal error shown, so the task's end does not repeat it
    todo: list[Any] = field(default_factory=list)  # the model's checklist (todo.updated items)
    plan: str = ""  # a plan the model ended with in plan mode, waiting for the person's decision

    def add(self, entry: Entry) -> Change:
        self.entries.append(entry)
        return Change("added", len(self.entries) - 1)

    def note(self, text: str, level: NoticeLevel = "info") -> Change:
        return self.add(NoticeEntry(text, level))

    def set_status(self, status: AgentStatus) -> Change:
        self.stats.status = status
        return Change("stats")

    def apply(self, event: Any) -> list[Change]:
        """Fold in one core event (dispatched on its `type`, so no core module is imported here)."""
        handler = getattr(self, "_on_" + event.type.replace(".", "_"), None)
        changes = handler(event) if handler else []
        if self.stats.activity and event.type != "model.progress":
            self.stats.activity = ""  # the model answered, or the turn ended
            changes.append(Change("stats"))
        return changes

    def _on_session_started(self, event: Any) -> list[Change]:
        stats = self.stats
        stats.session_id, stats.model, stats.approval = (
            event.session_id,
            event.model,
            event.approval,
        )
        stats.context_window, stats.budget = event.context_window, event.budget
        if stats.status == "new":
            stats.status = "idle"
        verb = "resumed" if event.resumed else "started"
        text = f"session {event.session_id} {verb} · {event.model} · approval: {event.approval}"
        return [self.note(text), Change("stats")]

    def _on_profile_changed(self, event: Any) -> list[Change]:
        return [self.note(f"small-model profile from now on: {event.reason}")]

    def _on_verification_finished(self, event: Any) -> list[Change]:
        outcome = "passed" if event.passed else "failed"
        checks = ", ".join(f"{check.name} {check.status}" for check in event.checks)
        level: NoticeLevel = "success" if event.passed else "warning"
        return [self.note(f"checks of the changed files {outcome}: {checks}", level)]

    def _on_hook_ran(self, event: Any) -> list[Change]:
        """A hook that blocked or failed is a note; one that ran and let things be is not shown."""
        if event.blocked:
            return [self.note(f"{event.hook_event} hook blocked it: {event.reason}", "warning")]
        if event.exit_code != 0:
            return [self.note(f"{event.hook_event} hook failed: {event.reason}", "warning")]
        return []

    def _on_todo_updated(self, event: Any) -> list[Change]:
        self.todo = list(event.items)
        return [Change("todo")]

    def _on_plan_mode_changed(self, event: Any) -> list[Change]:
        self.stats.plan_mode, self.plan = event.active, ""
        text = (
            "plan mode: only the read tools run; the agent answers with a plan for you to accept or edit"
            if event.active
            else "plan mode off: every tool works again"
        )
        return [self.note(text), Change("stats"), Change("plan")]

    def _on_image_attached(self, event: Any) -> list[Change]:
        if event.note:
            return [self.note(f"image {event.name} not sent: {event.note}", "warning")]
        size = f"{event.size / 1e3:.1f} KB"
        source = "read by read_file" if event.origin == "tool" else "sent with the prompt"
        return [self.note(f"image {event.name} ({event.media_type}, {size}) {source}")]

    def _on_user_message(self, event: Any) -> list[Change]:
        if event.purpose == "status":  # a status line kept for the model: the status bar shows it
            return []
        changes = self._end_stream()
        changes.append(self.add(UserEntry(event.text, event.origin)))
        if event.origin == "user":  # a new task: its tokens count from zero
            self.stats.used = 0
            changes.append(self.set_status("running"))
        return changes

    def _on_assistant_delta(self, event: Any) -> list[Change]:
        if self._streaming is None:
            self._streaming = len(self.entries)
            return [self.add(AssistantEntry(event.text, streaming=True))]
        entry = self.entries[self._streaming]
        assert isinstance(entry, AssistantEntry)
        entry.text += event.text
        return [Change("delta", self._streaming, event.text)]

    def _on_assistant_message(self, event: Any) -> list[Change]:
        changes: list[Change] = []
        if event.cost is not None:
            self.stats.cost = (self.stats.cost or 0.0) + event.cost
            changes.append(Change("stats"))
        if self._streaming is not None:
            index, self._streaming = self._streaming, None
            entry = self.entries[index]
            assert isinstance(entry, AssistantEntry)
            entry.streaming = False
            if event.text.strip():
                entry.text = event.text
            changes.append(Change("updated", index))
        elif event.text.strip():
            changes.append(self.add(AssistantEntry(event.text)))
        return changes

    def _on_model_retry(self, event: Any) -> list[Change]:
        changes = self._end_stream()
        text = (
            f"{event.error_class}: {fmt.one_line(event.message, 120)} — retrying in "
            f"{event.delay:.1f}s ({event.attempt}/{event.max_attempts})"
        )
        changes.append(self.note(text, "warning"))
        return changes

    def _on_model_progress(self, event: Any) -> list[Change]:
        """The local model getting ready or reading a long prompt: the status says so; assembling the
        model file (once, seconds) and the model being ready after it are said in the transcript too."""
        changes = [Change("stats")]
        if event.stage == "assembling":
            self._assembled = True
            self.stats.activity = "assembling the model"
            changes.append(self.note(event.message))
        elif event.stage == "loading":
            self.stats.activity = "loading the model"
        elif event.stage == "prompt":
            self.stats.activity = f"reading the prompt {fmt.percent(event.done, event.total)}"
        else:
            self.stats.activity = ""
            if self._assembled:
                self._assembled = False
                changes.append(self.note(event.message or "the model is ready", "success"))
        return changes

    def _on_approval_requested(self, event: Any) -> list[Change]:
        changes = [self.set_status("approval"), Change("approval")]
        index = self._tools.get(event.call_id)
        if index is not None:
            tool = self.entries[index]
            assert isinstance(tool, ToolEntry)
            tool.state = "approval"
            changes.append(Change("updated", index))
        return changes

    def _on_tool_started(self, event: Any) -> list[Change]:
        changes = self._end_stream()
        if self.stats.status == "approval":
            changes.append(self.set_status("running"))
        self._tools[event.call_id] = len(self.entries)
        changes.append(self.add(ToolEntry(event.call_id, event.name, dict(event.arguments))))
        return changes

    def _on_tool_finished(self, event: Any) -> list[Change]:
        changes: list[Change] = []
        if self.stats.status == "approval":
            changes.append(self.set_status("running"))
        index = self._tools.get(event.call_id)
        if index is None:
            self._tools[event.call_id] = index = len(self.entries)
            changes.append(self.add(ToolEntry(event.call_id, event.name, {})))
        else:
            changes.append(Change("updated", index))
        tool = self.entries[index]
        assert isinstance(tool, ToolEntry)
        tool.state = _TOOL_STATE[event.status]
        tool.output, tool.diff, tool.duration_ms = event.output, event.diff, event.duration_ms
        return changes

    def _on_context_summarized(self, event: Any) -> list[Change]:
        text = (
            f"context summarized ({event.reason}): {fmt.tokens(event.tokens_before)} → "
            f"{fmt.tokens(event.tokens_after)} tokens"
        )
        return [self.note(text)]

    def _on_context_masked(self, event: Any) -> list[Change]:
        text = (
            f"{fmt.plural(event.masked, 'old tool output')} masked: {fmt.tokens(event.tokens_before)} → "
            f"{fmt.tokens(event.tokens_after)} tokens"
        )
        return [self.note(text)]

    def _on_budget_set(self, event: Any) -> list[Change]:
        self.stats.budget = event.budget
        return [Change("stats")]

    def _on_budget_updated(self, event: Any) -> list[Change]:
        stats = self.stats
        stats.used, stats.budget = event.used, event.budget
        stats.session_tokens = max(stats.session_tokens, event.session_usage.total_tokens)
        if event.context_window:
            stats.context_tokens, stats.context_window = event.context_tokens, event.context_window
        return [Change("stats")]

    def _on_undo_applied(self, event: Any) -> list[Change]:
        from keel.tui.undo import undo_note

        files = [file.path for file in event.files]
        return [self.note(undo_note(event.restored, event.undo_id, files, event.named))]

    def _on_error(self, event: Any) -> list[Change]:
        changes = [
            self.note(
                f"{event.error_class}: {event.message}", "error" if event.fatal else "warning"
            )
        ]
        if event.fatal:
            self._fatal = f"{event.error_class}: {event.message}"
            changes.append(self.set_status("error"))
        return changes

    def _on_subagent_started(self, event: Any) -> list[Change]:
        name = event.agent or "helper"
        child = ChildAgent(event.child_session_id, name, event.description)
        self.stats.children.append(child)
        where = " in its own worktree" if event.worktree else ""
        text = f"subagent {name}{where}: {event.description} (session {event.child_session_id})"
        return [self.note(text), Change("stats")]

    def _on_subagent_finished(self, event: Any) -> list[Change]:
        child = next(
            (c for c in self.stats.children if c.session_id == event.child_session_id), None
        )
        if child is None:  # a log cut before its start
            child = ChildAgent(event.child_session_id, event.agent or "helper", "")
            self.stats.children.append(child)
        child.status = _FINISHED_STATUS.get(event.status, "stopped")
        child.tokens = event.usage.total_tokens
        branch = f" · changes on branch {event.branch}" if event.branch else ""
        text = (
            f"subagent {child.name} {event.status.replace('_', ' ')} · "
            f"{fmt.tokens(child.tokens)} tokens{branch}"
        )
        level: NoticeLevel = "success" if event.status == "completed" else "warning"
        return [self.note(text, level), Change("stats")]

    def _on_session_finished(self, event: Any) -> list[Change]:
        """The end line says the task's steps and tokens apart from the session's totals (`usage`)."""
        changes = self._end_stream()
        stats = self.stats
        stats.status = _FINISHED_STATUS.get(event.status, "stopped")
        stats.steps = event.steps
        if event.task_usage.total_tokens:  # a log written before events carried it has none
            stats.used = event.task_usage.total_tokens
        stats.session_tokens = max(
            stats.session_tokens, event.session_usage.total_tokens, event.usage.total_tokens
        )
        if event.cost is not None:
            stats.cost = event.cost
        summary = (
            f"this task: {fmt.plural(event.steps, 'step')}, {fmt.tokens(stats.used)} tokens"
            f" · session: {fmt.tokens(stats.session_tokens)} tokens, {fmt.cost(stats.cost)}"
        )
        if event.status == "completed" and self.stats.plan_mode and event.final_message.strip():
            self.plan = event.final_message
            changes.append(self.note(f"plan ready: accept or edit it · {summary}", "success"))
            changes.append(Change("plan"))
        elif event.status == "completed":
            changes.append(self.note(f"done · {summary}", "success"))
        else:
            # "interrupted by the user", or the fatal error just shown, says nothing new
            said = event.reason and event.status != "interrupted" and event.reason != self._fatal
            reason = f": {event.reason}" if said else ""
            level: NoticeLevel = "error" if event.status == "error" else "warning"
            changes.append(
                self.note(f"{event.status.replace('_', ' ')}{reason} · {summary}", level)
            )
        changes.append(Change("stats"))
        return changes

    def _end_stream(self) -> list[Change]:
        """A stream cut short (retry, interrupt) keeps the text it got but stops streaming."""
        if self._streaming is None:
            return []
        index, self._streaming = self._streaming, None
        entry = self.entries[index]
        assert isinstance(entry, AssistantEntry)
        entry.streaming = False
        return [Change("updated", index)]
