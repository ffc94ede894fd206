"""`/sessions`: this directory's past sessions (those `keel sessions` lists), listed and reopened in the UI."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from keel.tui import format as fmt
from keel.tui.commands import CommandError

if TYPE_CHECKING:
    from keel.agent.core.protocol import AnyEvent
    from keel.tui.agents import AgentHandle
    from keel.tui.pool import AgentPool

SHOWN = 20  # the newest ones listed; older ones reopen by id


@dataclass(frozen=True)
class PastSession:
    """One past session's line: when it started, how its last task ended, its first prompt."""

    log: Path
    session_id: str
    started: float
    status: str
    prompt: str


def summarize(log: Path, events: list[AnyEvent]) -> PastSession | None:
    """None for a log without its start (nothing to reopen)."""
    started = next((e for e in events if e.type == "session.started"), None)
    if started is None:
        return None
    finished = [e for e in events if e.type == "session.finished"]
    prompts = [e.text for e in events if e.type == "user.message" and e.origin == "user"]
    return PastSession(
        log=log,
        session_id=started.session_id,
        started=started.ts,
        status=finished[-1].status if finished else "unfinished",
        prompt=prompts[0] if prompts else "",
    )


def find_past(cwd: Path, leave_out: set[str]) -> list[PastSession]:
    """The newest SHOWN past sessions of cwd, but those in leave_out (open in this UI already)."""
    from keel.agent.core.api import past_sessions, read_session

    found: list[PastSession] = []
    for log in past_sessions(cwd):
        if log.stem in leave_out:
            continue
        past = summarize(log, read_session(log))
        if past is not None:
            found.append(past)
        if len(found) == SHOWN:
            break
    return found


def listing(sessions: list[PastSession], cwd: Path) -> str:
    """The notice /sessions shows: numbered lines, and how to reopen one."""
    if not sessions:
        return f"no past sessions in {cwd} besides those open here (`keel sessions` lists them)"
    lines = [f"past sessions in {cwd} — reopen one with /sessions N (or /sessions ID):"]
    for number, past in enumerate(sessions, 1):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(past.started))
        prompt = fmt.one_line(past.prompt, 50) or "(no prompt)"
        lines.append(f"  {number:>2}  {past.session_id}  {when}  {past.status:<16} {prompt}")
    return "\n".join(lines)


def pick(argument: str, listed: list[PastSession]) -> Path:
    """The log that `/sessions N` (a number of the last listing) or `/sessions ID` (an id or prefix) names."""
    from keel.agent.core.api import find_session

    if argument.isdecimal() and len(argument) <= 2:  # ids are longer: they start with the date
        number = int(argument)
        if not listed:
            raise CommandError("/sessions N reopens a listed session: /sessions lists them first")
        if not 1 <= number <= len(listed):
            raise CommandError(f"/sessions takes a number from 1 to {len(listed)}; got {number}")
        return listed[number - 1].log
    log = find_session(argument)
    if log is None:
        raise CommandError(
            f"no single session matches {argument!r}; /sessions lists this directory's sessions"
        )
    return log


async def reopen(
    pool: AgentPool, argument: str, listed: list[PastSession]
) -> tuple[AgentHandle, bool]:
    """The agent of the session `argument` names: the one open here already, else a new one (True)."""
    log = pick(argument, listed)
    open_here = next((h for h in pool.handles if h.stats.session_id == log.stem), None)
    if open_here is not None:
        return open_here, False
    from keel.agent.core.api import read_session

    return pool.reopen(log, await asyncio.to_thread(read_session, log)), True
