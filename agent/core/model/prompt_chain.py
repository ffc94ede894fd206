"""A session's model calls logged as what each prompt adds: the ids after those it shares with the last logged call.

A rollout's prompt grows call by call; logging it whole at every call makes a session's log grow with the
square of its length. The session keeps the last logged call's ids here (not in its folded state) and logs a
call's prompt as the ids after the ones it shares with that call's prompt and completion
(TurnTokens.prompt_reuses), or whole when it shares less than half of the last prompt (a summary, a rewritten
context). keel.agent.harness.rollouts.call_tokens rebuilds every whole prompt from the log.

Over the direct client the prompt's ids arrive as JSON; parsing thousands of ids at each call is what costs,
so they are compared with the last call's as bytes and only the ids after the shared ones are parsed
(`read_json`). The client proposes what it read; the session commits it when it logs the call, so that a
reply that was never logged is never what the next call is cut against. Whole prompts (through litellm, from
the embedded model) are cut by the session as it logs them (`logged`).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from pydantic import TypeAdapter

from keel.agent.core.protocol import AnyEvent, AssistantMessage, ContextSummarized, TurnTokens

PROMPT_IDS_KEY = b'"prompt_token_ids"'
_IDS = TypeAdapter(list[int])  # parses and checks JSON ids in one pass, twice as fast as json.loads


@dataclass(frozen=True)
class _Call:
    """What the next call is cut against: a call's prompt (its JSON as the server sent it, or its ids packed
    8 bytes each with its completion's after them), its length in ids, and its completion."""

    prompt_count: int
    completion: list[int] | None
    prompt_json: bytes | None = None
    packed: bytes | None = None  # prompt + completion


def split_prompt_ids(payload: bytes) -> tuple[bytes, bytes | None]:
    """A chunk's JSON with its `prompt_token_ids` list left unparsed: the chunk with `null` in its place, and
    the list's JSON (None when the chunk has none)."""
    at = payload.find(PROMPT_IDS_KEY)
    if at < 0:
        return payload, None
    start = payload.find(b"[", at)
    end = payload.find(b"]", start)
    if start < 0 or end < 0 or payload[at + len(PROMPT_IDS_KEY) : start].strip() != b":":
        return payload, None
    return payload[:start] + b"null" + payload[end + 1 :], payload[start : end + 1]


def _common(new: bytes, old: bytes) -> int:
    """The length of the bytes two sequences begin with: galloping back from the end (a prompt usually shares
    all but its last few hundred bytes with the last one), then halving the window, each step a memcmp (of a
    view: a slice of a prompt's JSON would copy it)."""
    end = min(len(new), len(old))
    view = memoryview(old)
    if new.startswith(view[:end]):
        return end
    high, step = end, 256
    while True:
        low = max(end - step, 0)
        if low == 0 or new.startswith(view[:low]):
            break
        high, step = low, step * 4
    while high - low > 1:  # new[:low] == old[:low], new[:high] != old[:high]
        middle = (low + high) // 2
        if new.startswith(view[low:middle], low):
            low = middle
        else:
            high = middle
    return low


def _shared_ids(new: bytes, old: bytes, old_count: int) -> tuple[int, int]:
    """How many leading ids two JSON id lists share, and where the new one's next id starts."""
    common = _common(new, old)
    if common >= len(old) - 1:  # all of the old list, up to its closing bracket
        if common == len(new):
            return old_count, len(new) - 1
        if new[common : common + 1] == b",":
            return old_count, common + 1
    comma = new.rfind(b",", 0, common)
    if comma < 0:
        return 0, 1
    return old_count - 1 - old.count(b",", comma + 1), comma + 1


def _packed(ids: list[int] | None) -> bytes | None:
    """The ids as 8 bytes each (a prefix of ids is then a prefix of bytes); None when there are none to pack."""
    if ids is None:
        return None
    try:
        return array("q", ids).tobytes()
    except OverflowError:  # an id no real vocabulary has: such a call is logged whole
        return None


class PromptChain:
    """The last logged model call of a session, to log the next one's prompt as what it adds."""

    def __init__(self) -> None:
        self._last: _Call | None = None  # the last logged call, when the next can be cut against it
        self._proposed: tuple[TurnTokens, _Call] | None = None  # read by the client, not yet logged

    def read_json(self, raw: bytes) -> tuple[list[int], int | None]:
        """A prompt's ids from their JSON: those after the ones shared with the last logged call (only they
        are parsed), and how many those are; whole (None) when it shares less than half the last prompt.
        ValueError when `raw` is not a JSON list of ids."""
        last = self._last
        if last is None or last.prompt_json is None or not last.prompt_count:
            return _IDS.validate_json(raw), None
        reused, start = _shared_ids(raw, last.prompt_json, last.prompt_count)
        if 2 * reused < last.prompt_count:
            return _IDS.validate_json(raw), None
        added = _IDS.validate_json(b"[" + raw[start:])
        completion = last.completion
        if reused == last.prompt_count and completion and added[: len(completion)] == completion:
            added, reused = added[len(completion) :], reused + len(completion)
        return added, reused

    def propose(self, tokens: TurnTokens, raw: bytes) -> None:
        """The client read `tokens` (its prompt from `raw`): what the next call is cut against once logged."""
        if tokens.prompt_token_ids is None or tokens.completion_token_ids is None:
            return  # no call can be cut against it: once logged, the next is whole
        count = (tokens.prompt_reuses or 0) + len(tokens.prompt_token_ids)
        call = _Call(count, tokens.completion_token_ids, prompt_json=raw)
        self._proposed = (tokens, call)

    def logged(self, event: AnyEvent) -> AnyEvent:
        """A model call's event as the log holds it, its prompt cut when the client did not cut it; any other
        event as it is."""
        if not isinstance(event, AssistantMessage | ContextSummarized) or event.tokens is None:
            return event
        tokens, proposed, self._proposed = event.tokens, self._proposed, None
        if proposed is not None and proposed[0] is tokens:
            self._last = proposed[1]
            return event
        cut = self._cut(tokens)
        return event if cut is tokens else event.model_copy(update={"tokens": cut})

    def _cut(self, tokens: TurnTokens) -> TurnTokens:
        """A whole prompt cut to the ids after those it shares with the last call's, when it shares at least
        half of the last prompt."""
        prompt, last = tokens.prompt_token_ids, self._last
        self._last = None
        if tokens.prompt_reuses is not None or prompt is None:  # cut elsewhere, or no ids at all
            return tokens
        packed = _packed(prompt)
        completion = _packed(tokens.completion_token_ids)
        if packed is not None and completion is not None:
            self._last = _Call(len(prompt), tokens.completion_token_ids, packed=packed + completion)
        if packed is None or last is None or last.packed is None:
            return tokens
        reused = _common(packed, last.packed) // 8
        if reused == 0 or 2 * reused < last.prompt_count:
            return tokens
        return tokens.model_copy(
            update={"prompt_token_ids": prompt[reused:], "prompt_reuses": reused}
        )
