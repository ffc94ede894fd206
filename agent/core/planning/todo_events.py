"""The todo tool's calls as todo.updated events: the checklist the session state keeps."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from keel.agent.core.protocol import TodoItem, TodoUpdated
from keel.tools.todo import TodoArgs, TodoTool


def todo_update(name: str, arguments: dict[str, Any], call_id: str) -> TodoUpdated | None:
    """The event a successful `todo` call records; None for any other tool (or arguments it refused)."""
    if name != TodoTool.name:
        return None
    try:
        args = TodoArgs.model_validate(arguments)
    except ValidationError:
        return None
    items = [TodoItem(content=item.content, status=item.status) for item in args.items]
    return TodoUpdated(call_id=call_id, items=items)
