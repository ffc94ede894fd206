"""`keel sessions`: the sessions started in a workspace, newest first, with how each one ended."""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel

from keel.agent.core.api.sessions import SessionState, apply, read_events, sessions_dir
from keel.agent.core.errors import ExitCode
from keel.agent.core.protocol import AnyEvent, SessionStarted, TaskFinished, UserMessage


class SessionSummary(BaseModel):
    session_id: str
    started: float
    model: str
    cwd: str
    status: str
    steps: int
    tokens: int
    prompt: str


def summarize_log(path: Path) -> SessionSummary:
    """One session's line: its start, how it ended, and what it spent, counted from the events themselves
    (a killed session has no session.finished, yet its steps and tokens are in its log)."""
    events = read_events(path)
    started = next((e for e in events if isinstance(e, SessionStarted)), None)
    if started is None:  # killed before its first event: listed, so it can be found and removed
        return SessionSummary(
            session_id=path.stem,
            started=path.stat().st_mtime,
            model="",
            cwd="",
            status="empty",
            steps=0,
            tokens=0,
            prompt="(stopped before it recorded its task; nothing to resume)",
        )
    finished = [e for e in events if isinstance(e, TaskFinished)]
    prompts = [e.text for e in events if isinstance(e, UserMessage) and e.origin == "user"]
    steps, tokens = steps_and_tokens(events, started.session_id)
    return SessionSummary(
        session_id=started.session_id,
        started=started.ts,
        model=started.model,
        cwd=started.cwd,
        status=finished[-1].status if finished else "unfinished",
        steps=steps,
        tokens=tokens,
        prompt=prompts[0] if prompts else "",
    )


def steps_and_tokens(events: list[AnyEvent], session_id: str) -> tuple[int, int]:
    """Steps of every task in the session and the tokens it spent, as the fold counts them: a task's steps
    restart at its prompt and run on through resumes of it, so each task counts with its last figure."""
    state = SessionState(session_id=session_id)
    total = 0
    for event in events:
        if isinstance(event, UserMessage) and event.origin == "user":
            total += state.steps
        state = apply(state, event)
    return total + state.steps, state.usage.total_tokens


def list_sessions(cwd: Path | None) -> list[SessionSummary]:
    """Sessions of one workspace (all of them with cwd None), newest first."""
    directory = sessions_dir()
    if not directory.is_dir():
        return []
    summaries = (summarize_log(p) for p in sorted(directory.glob("*.jsonl"), reverse=True))
    # an empty log names no workspace: it shows in every one
    return [s for s in summaries if cwd is None or s.cwd in (str(cwd), "")]


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
