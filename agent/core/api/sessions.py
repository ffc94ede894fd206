"""The public surface for reading sessions: their logs, the events in them and the state those fold to."""

from __future__ import annotations

from keel.agent.core.context.manager import summary_block
from keel.agent.core.fold import INTERRUPTED_NOTE, UNFINISHED_RESULT, apply, fold, unanswered_calls
from keel.agent.core.messages import Message
from keel.agent.core.state import SessionState
from keel.agent.core.store import find_session, no_task_to_continue, read_events, sessions_dir

__all__ = [
    "INTERRUPTED_NOTE",
    "UNFINISHED_RESULT",
    "Message",
    "SessionState",
    "apply",
    "find_session",
    "fold",
    "no_task_to_continue",
    "read_events",
    "sessions_dir",
    "summary_block",
    "unanswered_calls",
]
