"""What a session knows as it runs: the history, the counters and the limits the loop checks.

The state is immutable; it changes only by `keel.agent.core.fold.apply(state, event)`, live and on resume alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from keel.agent.core.messages import Message
from keel.agent.core.model.client import ToolProtocolName
from keel.agent.core.protocol import FinishStatus, TodoItem, TokenUsage
from keel.agent.core.strategies.state import StrategyState
from keel.prompts import plural


class LimitExceeded(Exception):
    """Raised by `check_limits`; the loop turns it into a clean, resumable stop."""

    def __init__(self, status: FinishStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class SessionState:
    """One session's state, a fold of its events: `usage` is the session's total, `task_usage` the task's."""

    session_id: str
    max_steps: int = 200
    tool_protocol: ToolProtocolName = "native"
    budget: int | None = None  # the running task's
    default_budget: int | None = None  # the next tasks' (None: estimated, if estimates are on)
    history: tuple[Message, ...] = ()
    summaries: tuple[str, ...] = ()
    task_prompt: str = ""
    user_prompts: tuple[str, ...] = ()
    usage: TokenUsage = field(default_factory=TokenUsage)
    task_usage: TokenUsage = field(default_factory=TokenUsage)
    cost: float | None = None
    steps: int = 0
    masked_upto: int = 0
    epoch: int = (
        0  # bumped when earlier history changes (masking, a summary), for token counts kept aside
    )
    repeated_call: str = ""
    repeats: int = 0
    corrections: int = 0  # keel's corrections since the model last made a call
    replies: int = 0  # the model's replies in this session
    failed_replies: int = 0  # keel's corrections in this session (agent/core/profile_switch.py)
    small_profile: bool = False  # the session moved its model to the small-model profile
    strategy: StrategyState = field(default_factory=StrategyState)  # what only strategies read
    generated_call_ids: int = 0  # call ids keel generated so far
    turn_id: str = ""  # the last turn's id
    task_open: bool = False  # a task turn started and has not ended
    todo: tuple[TodoItem, ...] = ()  # the model's checklist, as its last `todo` call wrote it
    plan_mode: bool = False  # only the read tools run; the model ends with a plan
    allowed_for_session: frozenset[str] = (
        frozenset()
    )  # tools a person allowed for the rest of the session
    # what the agent has seen of files, for "read it before you write it": each file's (mtime_ns, size) when
    # it last read or wrote it, by absolute path, and the files it changed
    read_stamps: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    changed_files: frozenset[str] = frozenset()

    @property
    def task_tokens(self) -> int:
        return self.task_usage.total_tokens

    def check_limits(self) -> None:
        if self.budget is not None and self.task_tokens >= self.budget:
            raise LimitExceeded(
                "budget_exhausted", f"used {self.task_tokens} of a {self.budget}-token budget"
            )
        if self.steps >= self.max_steps:
            raise LimitExceeded(
                "max_steps", f"reached the limit of {plural(self.max_steps, 'step')}"
            )

    def call_id(self, offset: int) -> str:
        """The id keel gives the `offset`-th (from 1) new call without one; the fold counts them."""
        return f"{self.call_prefix}{self.generated_call_ids + offset}"

    @property
    def call_prefix(self) -> str:
        return f"call_{self.session_id[-6:]}_"

    def repeats_of(self, signature: str) -> int:
        """How many times in a row this exact call will have been made, counting this one."""
        return self.repeats + 1 if signature == self.repeated_call else 1


def call_signature(name: str, arguments: dict[str, Any]) -> str:
    """What makes two calls the same call, for the loop guard."""
    return name + json.dumps(arguments, sort_keys=True)
