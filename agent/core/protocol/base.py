"""What ops and events are made of: the strict frozen base, token counts, tool calls, and the event envelope."""

from __future__ import annotations

import os
import random
import time
from contextvars import ContextVar
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Model(BaseModel):
    """Base for protocol models: values, frozen once built, strict about unknown fields (typos fail loudly)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class TokenUsage(Model):
    """Tokens as the provider reports them (or as estimated when it reports none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )


class ToolCall(Model):
    """One call the model asked for; `arguments` is the raw JSON text, validated only at dispatch."""

    id: str
    name: str
    arguments: str = ""


_ids = random.Random(os.urandom(16))
os.register_at_fork(
    after_in_child=lambda: _ids.seed(os.urandom(16))
)  # a forked child draws its own


def new_op_id() -> str:
    """A short random id; an op that starts a turn lends it to the turn and to every event of the turn.
    Unique, not secret: drawn from a generator seeded once per process (os.urandom per id is a
    system call per event)."""
    return f"{_ids.getrandbits(48):012x}"


# The turn whose work is running in this asyncio task (the session sets it for each turn's task): an event
# made there carries it from its constructor, so nothing stamps an event after it is built.
RUNNING_TURN: ContextVar[str] = ContextVar("keel_running_turn", default="")


def running_turn() -> str:
    """The id of the turn running in this task; "" outside any turn."""
    return RUNNING_TURN.get()


class Event(Model):
    """The envelope every event has, set where it is made: when (`ts`), the turn that caused it (`turn_id`,
    "" outside any turn) and its own `id`."""

    ts: float = Field(default_factory=time.time)
    turn_id: str = Field(default_factory=running_turn)
    id: str = Field(default_factory=new_op_id)


FinishStatus = Literal[
    "completed", "budget_exhausted", "max_steps", "loop_detected", "error", "interrupted"
]
