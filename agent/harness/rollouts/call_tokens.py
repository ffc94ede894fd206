"""Every model call's exact token ids, rebuilt from a session log that records them (`record_tokens`).

The log holds a call's prompt as the ids after those it shares with the previous call's prompt and completion
(TurnTokens.prompt_reuses), or whole. Walking the calls in log order gives back each whole prompt; logs
written before prompts were cut hold every prompt whole, and read the same way. A call is a context reset
when its prompt does not start with the previous call's prompt and completion, exactly: keel's status line,
which ends every request afresh, makes most calls one (a trainer merges turns only where it is not).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from keel.agent.core.api.sessions import read_events
from keel.agent.core.protocol import (
    AnyEvent,
    AssistantMessage,
    ContextSummarized,
    SessionStarted,
    TurnTokens,
)

UNKNOWN_PREFIX = "the prompt reuses ids of a call the log does not hold"


class CallTokens(BaseModel):
    """One model call's exact ids, rebuilt from the session log. `index`: its place among the session's model
    calls (agent turns and summary calls, in log order); `context_reset`: its prompt does not extend the
    previous call's prompt + completion exactly; `policy_version`: the server's X-Policy-Version header, None
    when unknown; `finish_reason`: the server's, as sent."""

    index: int
    role: Literal["agent", "self_summary"]
    prompt_ids: list[int]  # the whole prompt, rebuilt exactly
    completion_ids: list[int]
    logprobs: list[float] | None  # one per completion id
    context_reset: bool
    policy_version: str | None
    finish_reason: str | None


class PromptRebuilder:
    """Whole prompts from logged ones, fed every model call's tokens in log order."""

    def __init__(self) -> None:
        # the last call's prompt + completion, when both are known
        self._last: list[int] | None = None
        # whether the last prompt rebuilt did not extend the call before it
        self.reset_at_last = True

    def reset(self) -> None:
        """Nothing before this point can be reused (a resumed session starts its prompts whole)."""
        self._last = None

    def whole(self, tokens: TurnTokens | None) -> list[int] | None:
        """The call's whole prompt; None when it has none or reuses ids the log does not hold."""
        last, self._last = self._last, None
        if tokens is None:
            return None
        prompt, reuses = tokens.prompt_token_ids, tokens.prompt_reuses
        if prompt is not None and reuses is not None:
            prompt = last[:reuses] + prompt if last is not None and len(last) >= reuses else None
        if prompt is None:
            return None
        self.reset_at_last = last is None or prompt[: len(last)] != last
        if tokens.completion_token_ids is not None:
            self._last = prompt + tokens.completion_token_ids
        return prompt


def calls_tokens(events: Sequence[AnyEvent]) -> list[CallTokens]:
    """Every model call of the log with its ids (calls without recorded tokens are skipped)."""
    rebuilder = PromptRebuilder()
    calls: list[CallTokens] = []
    index = -1
    for event in events:
        if isinstance(event, SessionStarted):
            rebuilder.reset()
        if not isinstance(event, AssistantMessage | ContextSummarized):
            continue
        index += 1
        tokens = event.tokens
        prompt = rebuilder.whole(tokens)
        if (
            tokens is None
            or prompt is None
            or tokens.completion_token_ids is None
            or tokens.missing
        ):
            continue  # nothing recorded, ids the log does not hold, or a reply's ids that came back short
        calls.append(
            CallTokens(
                index=index,
                role="agent" if isinstance(event, AssistantMessage) else "self_summary",
                prompt_ids=prompt,
                completion_ids=tokens.completion_token_ids,
                logprobs=tokens.logprobs,
                context_reset=rebuilder.reset_at_last,
                policy_version=tokens.policy_version,
                finish_reason=tokens.finish_reason,
            )
        )
    return calls


def read_calls_tokens(session_log: Path) -> list[CallTokens]:
    """The model calls' ids of a session log file (keel's sessions directory holds them)."""
    return calls_tokens(read_events(session_log))
