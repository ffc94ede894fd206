"""The events of what keel does around its loop: subagents (the task tool), hooks, the model's plan (todo,
plan mode) and images given to the model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from keel.agent.core.protocol.base import Event, FinishStatus, Model, TokenUsage


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
    """A hook command ran (agent/core/hooks): at which `hook_event`, for which tool call, how it exited, and whether
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
