"""What a strategy makes of a reply that calls no tool: the task's final answer, or keel's word instead."""

from __future__ import annotations

from dataclasses import dataclass

from keel.agent.core.protocol import AnyEvent


@dataclass(frozen=True)
class Ending:
    """The task's final answer (None: it goes on), after keel's events (a nudge, a verification)."""

    answer: str | None
    events: tuple[AnyEvent, ...] = ()
