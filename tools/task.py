"""The `task` tool: hand a self-contained piece of work to a subagent (a child session) and get its answer."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import Field

from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult


class TaskArgs(ToolArgs):
    description: str = Field(
        min_length=1,
        max_length=120,
        description="A few words saying what the subagent does, e.g. 'review the parser change'.",
    )
    prompt: str = Field(
        min_length=1,
        description="The work, complete and self-contained: what to do, where to look, and what to "
        "report back. The subagent sees nothing of this conversation.",
    )
    agent: str | None = Field(
        default=None,
        description="The name of an agent to run (listed in this tool's description); omit it for a "
        "general helper with read tools only.",
    )


class SubagentLauncher(Protocol):
    """What runs the child sessions (keel.agent.core.subagents.runner): the session binds one to its task tool."""

    async def run(self, args: TaskArgs) -> ToolResult: ...


class TaskTool(Tool[TaskArgs]):
    name = "task"
    # the child's own calls go through its own approval policy (the session's) and its own tools
    kind = ToolKind.READ
    same_result_again = False
    description = (
        "Hand a self-contained piece of work to a subagent: a child session with its own context that "
        "returns only its final answer (what it read and tried stays out of your context). Use it to "
        "explore a large codebase, review changes, or run and read the tests. Put everything it needs in "
        "`prompt`. Without `agent` it can only read. Its tokens count against your budget."
    )
    Args = TaskArgs

    def __init__(self, launcher: SubagentLauncher | None = None) -> None:
        self.launcher = launcher

    async def run(self, args: TaskArgs, ctx: ToolContext) -> ToolResult:
        if self.launcher is None:
            raise ToolError(
                "subagents are not available here (a subagent cannot start one of its own); "
                "do the work yourself with your other tools"
            )
        return await self.launcher.run(args)


def task_tool_for(launcher: SubagentLauncher, agents_text: str) -> Tool[Any]:
    """The session's task tool: bound to its launcher, its description listing the agents it can name."""
    if not agents_text:
        return TaskTool(launcher)
    described = type(
        "TaskTool", (TaskTool,), {"description": f"{TaskTool.description}\n\n{agents_text}"}
    )
    tool: TaskTool = described(launcher)
    return tool
