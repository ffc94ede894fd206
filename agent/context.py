"""Builds each model request from the session state: the stable prefix, the history, the status line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.errors import ContextWindowExceeded
from agent.messages import Message, to_wire
from agent.protocol import AnyEvent, BudgetUpdated
from agent.state import SessionState
from agent.system_prompt import SystemPrompt


class ContextManager:
    """Decides what the model sees on each call."""

    def __init__(self, system_prompt: SystemPrompt, window: int, emit: Callable[[AnyEvent], None]) -> None:
        self.system_prompt = system_prompt
        self.window = window
        self.emit = emit

    def build_request(self, state: SessionState) -> list[dict[str, Any]]:
        messages = [Message(role="system", content=self.system_prompt.text(state.tool_protocol))]
        messages.extend(state.history)
        return to_wire(messages, state.tool_protocol)

    def after_model_call(self, state: SessionState) -> None:
        self.emit(BudgetUpdated(used=state.task_tokens, budget=state.budget, context_window=self.window))

    def after_step(self, state: SessionState) -> None:
        """Nothing to do until summarization lands."""

    async def compact(self, state: SessionState, reason: str) -> None:
        raise ContextWindowExceeded("the context is full and cannot be compacted yet", "ContextWindowExceeded")
