"""`keel sessions`: the sessions started in a workspace, newest first, with how each one ended."""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel

from keel.agent.errors import ExitCode
from keel.agent.protocol import AnyEvent, SessionFinished, SessionStarted, UserMessage
from keel.agent.store import read_events, sessions_dir


class SessionSummary(BaseModel):
    session_id: str
    started: float
    model: str
    cwd: str
    status: str
    steps: int
    tokens: int
    prompt: str


def summarize_log(path: Path) -> SessionSummary | None:
    events = read_events(path)
    started = next((e for e in events if isinstance(e, SessionStarted)), None)
    if started is None:
        return None
    finished = [e for e in events if isinstance(e, SessionFinished)]
    prompts = [e.text for e in events if isinstance(e, UserMessage) and e.origin == "user"]
    last = finished[-1] if finished else None
    return SessionSummary(
        session_id=started.session_id,
        started=started.ts,
        model=started.model,
        cwd=started.cwd,
        status=last.status if last else "unfinished",
        steps=total_steps(events),
        tokens=last.usage.total_tokens if last else 0,
        prompt=prompts[0] if prompts else "",
    )


def total_steps(events: list[AnyEvent]) -> int:
    """Steps of every task in the session: a task's `steps` restart at its prompt and run on
    through resumes of it, so each task counts with the last figure it reported."""
    total = current = 0
    for event in events:
        if isinstance(event, UserMessage) and event.origin == "user":
            total, current = total + current, 0
        elif isinstance(event, SessionFinished):
            current = event.steps
    return total + current


def list_sessions(cwd: Path | None) -> list[SessionSummary]:
    """Sessions of one workspace (all of them with cwd None), newest first."""
    directory = sessions_dir()
    if not directory.is_dir():
        return []
    summaries = (summarize_log(p) for p in sorted(directory.glob("*.jsonl"), reverse=True))
    return [s for s in summaries if s is not None and (cwd is None or s.cwd == str(cwd))]


def print_sessions(cwd: Path) -> int:
    sessions = list_sessions(cwd)
    if not sessions:
        print(f"no sessions in {cwd} yet; start one with `keel` or `keel run PROMPT`")
        return ExitCode.OK
    print(f"{'ID':<23} {'STARTED':<16} {'STATUS':<16} {'STEPS':>5} {'TOKENS':>9}  PROMPT")
    for s in sessions:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.started))
        prompt = " ".join(s.prompt.split())[:50]
        print(f"{s.session_id:<23} {when:<16} {s.status:<16} {s.steps:>5} {s.tokens:>9}  {prompt}")
    print("\nresume one with: keel resume ID  (or headless: keel run --resume ID)")
    return ExitCode.OK
