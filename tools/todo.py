"""The `todo` tool: the model writes its checklist for the task, the whole list each call, so a long task
keeps its plan (the session records it as todo.updated and restates it after a self-summary)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from keel.prompts import plural, render
from keel.tools.base import Tool, ToolArgs, ToolContext, ToolKind, ToolResult

MAX_ITEMS = 50


class TodoEntry(BaseModel):
    """One item of the checklist."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, max_length=500, description="what to do, in a short line")
    status: Literal["pending", "in_progress", "done"] = Field(
        "pending", description="pending, in_progress (what you work on now) or done"
    )

    @field_validator("content")
    @classmethod
    def _one_line(cls, value: str) -> str:
        """Items show one per line; a blank item says nothing."""
        line = " ".join(value.split())
        if not line:
            raise ValueError("an item needs some text")
        return line


class TodoArgs(ToolArgs):
    items: list[TodoEntry] = Field(
        max_length=MAX_ITEMS,
        description="the whole checklist, in order: every call replaces the list "
        "(send [] to clear it)",
    )


class TodoTool(Tool[TodoArgs]):
    name = "todo"
    kind = ToolKind.READ  # it changes no file: only the session's record of the plan
    description = (
        "Write your checklist for a task of several steps: the whole list each time, every item "
        "with its status (pending, in_progress, done). Mark an item in_progress when you start it "
        "and done when it is finished; the list is shown to the person and kept for you when the "
        "context is summarized. Skip it for a one-step task."
    )
    Args = TodoArgs

    async def run(self, args: TodoArgs, ctx: ToolContext) -> ToolResult:
        if not args.items:
            return ToolResult(output="The todo list is now empty.")
        done = sum(item.status == "done" for item in args.items)
        listing = render("todo_list", items=args.items)
        head = f"Todo list updated: {done} of {plural(len(args.items), 'item')} done."
        return ToolResult(output=f"{head}\n{listing}")
