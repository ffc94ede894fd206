"""Subagents: the `task` tool's child sessions and the agent definitions they run (README: "Subagents")."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keel.agent.core.approval import AskPerson
    from keel.agent.core.protocol import AnyEvent
    from keel.agent.core.settings import SessionSettings
    from keel.agent.core.state import SessionState
    from keel.tools.base import Tool


def with_subagents(
    tools: list[Tool[Any]],
    settings: SessionSettings,
    emit: Callable[[AnyEvent], None],
    current: Callable[[], SessionState],
    ask: AskPerson | None = None,
) -> list[Tool[Any]]:
    """The session's tools with its `task` tool bound to a runner of child sessions (and its description
    listing the agents defined for this workspace); tools without `task` are returned as they are. `ask`: the
    session's way to ask its person, which its children's calls that need approval go through."""
    if not any(tool.name == "task" for tool in tools):
        return tools
    from keel.agent.core.subagents.runner import SubagentRunner
    from keel.tools.task import task_tool_for

    names = [tool.name for tool in tools]
    runner = SubagentRunner(settings, emit, current, lambda: names, ask)
    task = task_tool_for(runner, runner.agents_text())
    return [task if tool.name == "task" else tool for tool in tools]
