"""The propose_setup tool, offered only in a `keel setup` session: the model hands over its install commands
and test command, keel runs them from scratch in fresh worktrees and answers with the verdict."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import Field

from keel.tools.base import Tool, ToolArgs, ToolContext, ToolKind, ToolResult


class ProposeSetupArgs(ToolArgs):
    install: list[str] = Field(
        default_factory=list,
        description="shell commands, in order, that install the project and its dependencies into "
        "the repository folder (a .venv or node_modules there), from a fresh clone",
    )
    test: str = Field(
        description="one shell command that runs the test suite and prints the runner's summary"
    )
    notes: str = Field("", description="anything a person should know about this setup")


Verdict = Callable[[ProposeSetupArgs], Awaitable[ToolResult]]


class ProposeSetupTool(Tool[ProposeSetupArgs]):
    name = "propose_setup"
    kind = ToolKind.EXEC
    description = (
        "Propose how to install this repository and run its tests. keel runs the install commands "
        "and then the test command in a fresh checkout, in the sandbox, twice from scratch, and "
        "answers with the verdict: accepted, or why not (fix the recipe and propose again)."
    )
    Args = ProposeSetupArgs
    same_result_again = False

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict

    async def run(self, args: ProposeSetupArgs, ctx: ToolContext) -> ToolResult:
        return await self.verdict(args)
