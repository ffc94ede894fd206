"""Each model call's exact token ids, rebuilt from a session log (`record_tokens`), for training records.

A stand-in reading today's events, where each call logs its whole prompt: no policy version, no finish reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from keel.agent.core.api.sessions import read_events
from keel.agent.core.protocol import AnyEvent, AssistantMessage, ContextSummarized


class CallTokens(BaseModel):
    """One model call's exact ids, rebuilt from the session log."""

    index: int  # 0-based among the session's model calls (agent turns and summary calls, log order)
    role: Literal["agent", "self_summary"]
    prompt_ids: list[int]  # the whole prompt, rebuilt exactly
    completion_ids: list[int]
    logprobs: list[float] | None  # one per completion id
    context_reset: (
        bool  # this prompt does not extend the previous call's prompt + completion exactly
    )
    policy_version: str | None  # from the server's response header, or the one the trainer passed
    finish_reason: str | None  # the server's finish_reason for this call, as sent, or None


def calls_tokens(events: Sequence[AnyEvent]) -> list[CallTokens]:
    """Every model call of the log with its ids (calls without recorded tokens are skipped)."""
    calls: list[CallTokens] = []
    before: list[int] | None = None  # the previous call's prompt + completion, when it was recorded
    index = -1
    for event in events:
        if not isinstance(event, AssistantMessage | ContextSummarized):
            continue
        index += 1
        tokens = event.tokens
        if (
            tokens is None
            or tokens.missing  # not all came back: what did is not the whole
            or tokens.prompt_token_ids is None
            or tokens.completion_token_ids is None
        ):
            before = None
            continue
        prompt, completion = tokens.prompt_token_ids, tokens.completion_token_ids
        calls.append(
            CallTokens(
                index=index,
                role="agent" if isinstance(event, AssistantMessage) else "self_summary",
                prompt_ids=prompt,
                completion_ids=completion,
                logprobs=tokens.logprobs,
                context_reset=before is None or prompt[: len(before)] != before,
                policy_version=None,
                finish_reason=None,
            )
        )
        before = prompt + completion
    return calls


def read_calls_tokens(session_log: Path) -> list[CallTokens]:
    """The calls of a session log file."""
    return calls_tokens(read_events(session_log))
