"""Token-exact capture (`record_tokens`): what a call asks of an OpenAI-compatible server, and how its token ids
and logprobs are read from the reply.

vLLM (>= 0.10.2) answers `"return_token_ids": true` with the prompt's ids (`prompt_token_ids`, top level: in a
stream, on its first chunk) and each choice's generated ids (`token_ids`, in a stream the ids of that chunk's
delta), and `"logprobs": true` with `choices[i].logprobs.content[j].logprob`. What the server did not send is
named in `TurnTokens.missing`, never counted or guessed here. Each call also records the server's
`finish_reason` and the policy version its `X-Policy-Version` response header names (POLICY_VERSION_HEADER).

A session logs each call's prompt as the ids after those it shares with the call before it (PromptChain):
a session's log then grows with its length, not with the square of it.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from keel.agent.core.protocol import AnyEvent, AssistantMessage, ContextSummarized, TurnTokens

TOKEN_REQUEST: dict[str, Any] = {"return_token_ids": True, "logprobs": True}
# litellm passes the ids on, except those of a stream's last chunk (it rebuilds that chunk without them)
THROUGH_LITELLM = "through litellm, which drops the token ids of a stream's last chunk"
# the response header a trainer's server sets to the version of the weights that sampled the reply
POLICY_VERSION_HEADER = "X-Policy-Version"


@dataclass
class TokenCollector:
    """Gathers one reply's token ids and logprobs from its chunks (or its whole body), as sent."""

    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    relay: str = ""  # what carried the reply, when not keel itself (said when some ids are missing)
    policy_version: str | None = None  # the response's POLICY_VERSION_HEADER, when it had one

    def add_chunk(self, chunk: dict[str, Any]) -> None:
        """A streamed chunk, or a whole completion: the prompt's ids and the first choice's tokens."""
        prompt = chunk.get("prompt_token_ids")
        if isinstance(prompt, list):
            self.prompt_ids = prompt  # checked as TurnTokens is built (in pydantic's core: fast)
        choices = chunk.get("choices") or ()
        if choices and isinstance(choices[0], dict):
            self.add_choice(choices[0])

    def add_choice(self, choice: dict[str, Any]) -> None:
        ids = choice.get("token_ids")
        if isinstance(ids, list):
            self.completion_ids = (self.completion_ids or []) + ids
        logprobs = choice.get("logprobs")
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        if isinstance(content, list):
            found = [float(entry["logprob"]) for entry in content if isinstance(entry, dict)]
            self.logprobs = (self.logprobs or []) + found

    def result(self, finish_reason: str | None = None) -> TurnTokens:
        """The call's tokens; `missing` says what the server did not return, or why what it did is unusable."""
        tokens = turn_tokens(
            self.prompt_ids, self.completion_ids, self.logprobs, finish_reason, self.policy_version
        )
        if tokens.missing and self.relay and self.completion_ids is not None:
            return tokens.model_copy(update={"missing": f"{tokens.missing} ({self.relay})"})
        return tokens


def turn_tokens(
    prompt_ids: list[int] | None,
    completion_ids: list[int] | None,
    logprobs: list[float] | None,
    finish_reason: str | None = None,
    policy_version: str | None = None,
) -> TurnTokens:
    """TurnTokens of what a server returned; `missing` names each part it did not (and a count that does
    not match: a logprob per completion token)."""
    absent = [
        name
        for name, value in (
            ("prompt token ids", prompt_ids),
            ("completion token ids", completion_ids),
            ("logprobs", logprobs),
        )
        if value is None
    ]
    missing = ""
    if len(absent) == 3:
        missing = "the server returned no token ids or logprobs"
    elif absent:
        missing = "the server returned no " + " and no ".join(absent)
    elif len(logprobs or ()) != len(completion_ids or ()):
        missing = (
            f"the server returned {len(logprobs or ())} logprobs for "
            f"{len(completion_ids or ())} completion tokens"
        )
    try:
        return TurnTokens(
            prompt_token_ids=prompt_ids,
            completion_token_ids=completion_ids,
            logprobs=logprobs,
            missing=missing,
            finish_reason=finish_reason,
            policy_version=policy_version,
        )
    except ValidationError:
        return TurnTokens(
            missing="the server's token ids or logprobs are not numbers",
            finish_reason=finish_reason,
            policy_version=policy_version,
        )


def _packed(ids: list[int] | None) -> bytes | None:
    """The ids as 8 bytes each (a prefix of ids is then a prefix of bytes); None when there are none to pack."""
    if ids is None:
        return None
    try:
        return array("q", ids).tobytes()
    except OverflowError:  # an id no real vocabulary has: such a call is logged whole
        return None


def _shared(new: bytes, old: bytes) -> int:
    """How many leading ids (8 bytes each) two packed sequences share: found by halving, each step a memcmp."""
    if new.startswith(old):
        return len(old) // 8
    low, high = 0, min(len(new), len(old)) // 8  # new[:8 * low] == old[:8 * low]; high: a bound
    while low < high:
        middle = (low + high + 1) // 2
        if new[: 8 * middle] == old[: 8 * middle]:
            low = middle
        else:
            high = middle - 1
    return low


class PromptChain:
    """The last logged call's prompt and completion ids, packed (8 bytes an id, not a Python int each), so
    that the next call logs only the ids after those it shares with them (TurnTokens.prompt_reuses). The
    session that logs the calls keeps it, in log order; it is not part of the folded state."""

    def __init__(self) -> None:
        self._last = b""  # b"": no call the next one can reuse
        self._prompt = 0  # the last call's prompt length, in ids

    def logged(self, event: AnyEvent) -> AnyEvent:
        """A model call's event as the log holds it; any other event as it is."""
        if not isinstance(event, AssistantMessage | ContextSummarized) or event.tokens is None:
            return event
        tokens = self.cut(event.tokens)
        return event if tokens is event.tokens else event.model_copy(update={"tokens": tokens})

    def cut(self, tokens: TurnTokens) -> TurnTokens:
        """A call's whole prompt cut to the ids after those it shares with the last call's, when it shares at
        least half of the last prompt (less: a rewritten context, logged whole)."""
        prompt, last, last_prompt = tokens.prompt_token_ids, self._last, self._prompt
        if tokens.prompt_reuses is not None:  # already cut: nothing here knows its whole prompt
            self._last = b""
            return tokens
        packed = _packed(prompt)
        completion = _packed(tokens.completion_token_ids)
        self._last = packed + completion if packed is not None and completion is not None else b""
        self._prompt = len(prompt or ())
        if prompt is None or packed is None or not last:
            return tokens
        reused = _shared(packed, last)
        if reused == 0 or 2 * reused < last_prompt:
            return tokens
        update = {"prompt_token_ids": prompt[reused:], "prompt_reuses": reused}
        return tokens.model_copy(update=update)
