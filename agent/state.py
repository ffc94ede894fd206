"""What a session knows as it runs: the history, the counters and the limits the loop checks."""

from __future__ import annotations

from dataclasses import dataclass, field

from keel.agent.messages import Message
from keel.agent.model.client import ToolProtocolName
from keel.agent.protocol import FinishStatus, TokenUsage


class LimitExceeded(Exception):
    """Raised by `check_limits`; the loop turns it into a clean, resumable stop."""

    def __init__(self, status: FinishStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class SessionState:
    """The mutable state of one session; events and the session log are derived from its changes."""

    session_id: str
    tool_protocol: ToolProtocolName
    max_steps: int
    budget: int | None = None
    history: list[Message] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    task_prompt: str = ""
    user_prompts: list[str] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost: float | None = None
    steps: int = 0
    task_tokens: int = 0
    masked_upto: int = 0
    epoch: int = 0
    repeated_call: str = ""
    repeats: int = 0
    _calls: int = 0

    def record(
        self, message: Message, usage: TokenUsage | None = None, cost: float | None = None
    ) -> None:
        self.history.append(message)
        self.add_usage(usage, cost)

    def add_usage(self, usage: TokenUsage | None, cost: float | None = None) -> None:
        """Count a model call's tokens: the session's totals and the task's budget."""
        if usage is not None:
            self.usage = self.usage + usage
            self.task_tokens += usage.total_tokens
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    def start_task(self, message: Message) -> None:
        """A new prompt: steps, the budget and the loop guard count from zero (a file re-read is no loop)."""
        self.task_prompt = message.content
        self.user_prompts.append(message.content)
        self.steps = 0
        self.task_tokens = 0
        self.repeated_call, self.repeats = "", 0
        self.history.append(message)

    def apply_summary(self, summary: str, kept_messages: int) -> None:
        """Replace all but the last `kept_messages` messages by a summary of them."""
        self.history = self.history[len(self.history) - kept_messages :] if kept_messages else []
        self.summaries.append(summary)
        self.masked_upto = 0
        self.epoch += 1

    def note_call(self, signature: str) -> int:
        """How many times in a row this exact call has now been made."""
        self.repeats = self.repeats + 1 if signature == self.repeated_call else 1
        self.repeated_call = signature
        return self.repeats

    def check_limits(self) -> None:
        if self.budget is not None and self.task_tokens >= self.budget:
            raise LimitExceeded(
                "budget_exhausted", f"used {self.task_tokens} of a {self.budget}-token budget"
            )
        if self.steps >= self.max_steps:
            raise LimitExceeded("max_steps", f"reached the limit of {self.max_steps} steps")

    def next_call_id(self) -> str:
        self._calls += 1
        return f"call_{self.session_id[-6:]}_{self._calls}"

    def restore_call_counter(self) -> None:
        """After a replay, continue numbering generated call ids past those in the history."""
        prefix = f"call_{self.session_id[-6:]}_"
        numbers = [
            int(call.id[len(prefix) :])
            for message in self.history
            for call in message.tool_calls
            if call.id.startswith(prefix) and call.id[len(prefix) :].isdigit()
        ]
        self._calls = max(numbers, default=self._calls)

    def switch_to_text_protocol(self) -> None:
        self.tool_protocol = "text"
