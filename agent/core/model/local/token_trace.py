"""Token-exact capture on the embedded model: the ids llama.cpp read and sampled, and the model's logprob of each
sampled token, taken from its raw logits as it samples.

llama-cpp-python's own `logprobs` needs the logits of every position kept (`logits_all`: gigabytes at keel's
context sizes), so instead a logits processor, first in the sampler chain, sees each step's raw logits, and the
model's `generate` is wrapped for the duration to see each sampled token (the end-of-turn token included, which
create_completion never turns into text). The logprob is log-softmax of the raw logits at the sampled token, the
distribution before any penalty, grammar or temperature, as vLLM's default (`raw_logprobs`) reports it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from keel.agent.core.protocol import TurnTokens


@dataclass
class TokenTrace:
    """One generation's prompt ids, sampled ids and their logprobs."""

    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    _logits: Any = None  # the raw logits of the step being sampled
    _log_total: float = 0.0  # their log-sum-exp

    def see_logits(self, input_ids: Any, scores: Any) -> Any:
        """A llama-cpp-python logits processor that only looks (the array is llama.cpp's, refilled each step)."""
        import numpy

        self._logits = numpy.array(scores, dtype=numpy.float64)
        top = float(self._logits.max())
        self._log_total = top + math.log(float(numpy.exp(self._logits - top).sum()))
        return scores

    def sampled(self, token: int) -> None:
        self.completion_ids.append(token)
        if self._logits is not None:
            self.logprobs.append(float(self._logits[token]) - self._log_total)
            self._logits = None

    def processors(self, others: Any) -> Any:
        """The processors to sample with: this trace's first, so it sees the logits before any change."""
        from llama_cpp import LogitsProcessorList

        return LogitsProcessorList([self.see_logits, *(others or ())])

    @contextmanager
    def watching(self, llama: Any) -> Iterator[None]:
        """While open, every token `llama.generate` yields is recorded (create_completion samples through it)."""
        original = llama.generate

        def generate(*args: Any, **kwargs: Any) -> Iterator[int]:
            for token in original(*args, **kwargs):
                self.sampled(int(token))
                yield token

        llama.generate = generate
        try:
            yield
        finally:
            del llama.generate  # the class's method again


def turn_tokens_of(free: TokenTrace, constrained: TokenTrace | None) -> TurnTokens:
    """The turn's tokens from its generations: one, or a free one broken off where a call opened and the call
    decoded after the reply's start under the tools' grammar. The model's sequence is then the prompt, the start
    (as the second pass read it) and the call; the start's logprobs are the ones the free pass sampled it with,
    known only when it tokenizes the same way again."""
    if constrained is None:
        return TurnTokens(
            prompt_token_ids=free.prompt_ids,
            completion_token_ids=free.completion_ids,
            logprobs=free.logprobs,
        )
    prompt = free.prompt_ids
    if constrained.prompt_ids[: len(prompt)] != prompt:
        return TurnTokens(
            prompt_token_ids=prompt,
            missing="the tool call was decoded after a prompt that does not begin with the turn's",
        )
    start = constrained.prompt_ids[len(prompt) :]
    completion = start + constrained.completion_ids
    if free.completion_ids[: len(start)] != start:
        return TurnTokens(
            prompt_token_ids=prompt,
            completion_token_ids=completion,
            missing="no logprobs: the reply's start tokenizes differently from how the model wrote it",
        )
    return TurnTokens(
        prompt_token_ids=prompt,
        completion_token_ids=completion,
        logprobs=free.logprobs[: len(start)] + constrained.logprobs,
    )
