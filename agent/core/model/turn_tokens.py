"""Token-exact capture (`record_tokens`): what a call asks of an OpenAI-compatible server, and how its token ids
and logprobs are read from the reply.

vLLM (>= 0.10.2) answers `"return_token_ids": true` with the prompt's ids (`prompt_token_ids`, top level: in a
stream, on its first chunk) and each choice's generated ids (`token_ids`, in a stream the ids of that chunk's
delta), and `"logprobs": true` with `choices[i].logprobs.content[j].logprob`. What the server did not send is
named in `TurnTokens.missing`, never counted or guessed here. Each call also records the server's
`finish_reason` and the policy version its `X-Policy-Version` response header names (POLICY_VERSION_HEADER).

A session logs each call's prompt as the ids after those it shares with the call before it
(keel.agent.core.model.prompt_chain): a session's log then grows with its length, not with its square.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from keel.agent.core.model.prompt_chain import PromptChain
from keel.agent.core.protocol import TurnTokens

TOKEN_REQUEST: dict[str, Any] = {"return_token_ids": True, "logprobs": True}
# litellm passes the ids on, except those of a stream's last chunk (it rebuilds that chunk without them)
THROUGH_LITELLM = "through litellm, which drops the token ids of a stream's last chunk"
# the response header a trainer's server sets to the version of the weights that sampled the reply
POLICY_VERSION_HEADER = "X-Policy-Version"
NOT_NUMBERS = "the server's token ids or logprobs are not numbers"


@dataclass
class TokenCollector:
    """Gathers one reply's token ids and logprobs from its chunks (or its whole body), as sent."""

    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    relay: str = ""  # what carried the reply, when not keel itself (said when some ids are missing)
    policy_version: str | None = None  # the response's POLICY_VERSION_HEADER, when it had one
    prompt_json: bytes | None = None  # the prompt's ids as sent, left unparsed (prompt_chain)
    chain: PromptChain | None = None  # the session's, which reads prompt_json against its last call

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
        """The call's tokens; `missing` says what the server did not return, or why what it did is unusable.
        A prompt read from its JSON comes cut against the session's last logged call, and is proposed to it."""
        prompt: Any = self.prompt_ids
        reuses = None
        if self.prompt_json is not None:
            try:
                prompt, reuses = (self.chain or PromptChain()).read_json(self.prompt_json)
            except ValueError:
                prompt = [NOT_NUMBERS]  # fails as TurnTokens is built: said in `missing`
        tokens = turn_tokens(
            prompt, self.completion_ids, self.logprobs, finish_reason, self.policy_version, reuses
        )
        if tokens.missing and self.relay and self.completion_ids is not None:
            tokens = tokens.model_copy(update={"missing": f"{tokens.missing} ({self.relay})"})
        if self.chain is not None and self.prompt_json is not None:
            self.chain.propose(tokens, self.prompt_json)
        return tokens


def turn_tokens(
    prompt_ids: list[int] | None,
    completion_ids: list[int] | None,
    logprobs: list[float] | None,
    finish_reason: str | None = None,
    policy_version: str | None = None,
    prompt_reuses: int | None = None,
) -> TurnTokens:
    """TurnTokens of what a server returned; `missing` names each part it did not (and a count that does
    not match: a logprob per completion token). `prompt_reuses`: the prompt's ids are those after that many
    of the last logged call's (kept only with the ids)."""
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
            prompt_reuses=prompt_reuses if prompt_ids is not None else None,
        )
    except ValidationError:
        return TurnTokens(
            missing=NOT_NUMBERS,
            finish_reason=finish_reason,
            policy_version=policy_version,
        )
