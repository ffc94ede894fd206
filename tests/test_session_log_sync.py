"""The session log's background sync and the fold's state copy: the helpers that keep many sessions in one
process from stalling the event loop on fsyncs or spending a step's time re-initialising the state."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from keel.agent.core.fold import apply
from keel.agent.core.protocol import BudgetSet, TurnStarted, UserMessage
from keel.agent.core.state import SessionState
from keel.agent.core.store import SessionLog, read_events


async def test_sync_soon_then_aclose_keeps_every_line_and_closes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "s.jsonl"
    log = SessionLog(path)
    for n in range(30):
        log.append(UserMessage(text=f"message {n}"))
        if n % 3 == 0:
            log.sync_soon()  # several syncs in flight at once, each on the same descriptor
    await log.aclose()
    texts = [event.text for event in read_events(path) if isinstance(event, UserMessage)]
    assert texts == [f"message {n}" for n in range(30)]
    log.close()  # closing again is harmless
    with pytest.raises(ValueError):
        log.append(UserMessage(text="after close"))  # the file really is closed


async def test_many_logs_finish_without_waiting_on_each_other(tmp_path: Path) -> None:
    logs = [SessionLog(tmp_path / f"s{n}.jsonl") for n in range(20)]
    for log in logs:
        log.append(UserMessage(text="done"))
        log.sync_soon()
    await asyncio.gather(*(log.aclose() for log in logs))
    assert all(len(read_events(tmp_path / f"s{n}.jsonl")) == 1 for n in range(20))


def test_apply_copies_the_state_and_leaves_the_old_one_as_it_was() -> None:
    before = SessionState(session_id="s1")
    after = apply(before, BudgetSet(budget=500, default_budget=700))
    assert (after.budget, after.default_budget, after.session_id) == (500, 700, "s1")
    assert (before.budget, before.default_budget) == (None, None)
    opened = apply(after, TurnStarted(kind="task", turn_id="t1"))
    assert opened == SessionState(
        session_id="s1", budget=500, default_budget=700, turn_id="t1", task_open=True
    )
    with pytest.raises(AttributeError):
        opened.budget = 1  # type: ignore[misc]  # still frozen
