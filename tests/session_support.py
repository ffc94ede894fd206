"""Reading a live Session's events in tests: up to the first event of a kind (the task's end by default)."""

from __future__ import annotations

from collections.abc import Callable

from keel.agent.core.protocol import AnyEvent, TaskFinished
from keel.agent.core.session import Session


async def collect(
    session: Session,
    until: type = TaskFinished,
    on_event: Callable[[AnyEvent], None] | None = None,
) -> list[AnyEvent]:
    """The events up to and including the first `until`; on_event sees each as it comes."""
    seen: list[AnyEvent] = []
    async for event in session.events():
        seen.append(event)
        if on_event is not None:
            on_event(event)
        if isinstance(event, until):
            return seen
    raise AssertionError(f"the session closed before {until.__name__}")


async def until_finished(
    session: Session, on_event: Callable[[AnyEvent], None] | None = None
) -> list[AnyEvent]:
    """The events up to and including the task's session.finished."""
    return await collect(session, TaskFinished, on_event)
