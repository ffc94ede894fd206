"""Running token totals of the context: each message counted once, reconciled with what the provider reports.

Two tallies run side by side. The exact one counts with the tokenizer (a ~1 KB tool output costs ~0.1 ms);
the rough one from sizes alone (keel.agent.core.model.tokens.rough_count). Once the provider has reported a
prompt's tokens, the rough tally scaled by what it learned stands for the context while the context is far
from every limit; near one, and before the first report, the exact tally decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from keel.agent.core.messages import Message
from keel.agent.core.model.tokens import count_message, rough_count_message
from keel.agent.core.state import SessionState

EXACT_SCALE_BOUNDS = (0.5, 2.0)  # a provider's tokenizer against ours
ROUGH_SCALE_BOUNDS = (0.2, 2.0)  # against a size-based count that runs high (prose ~0.45)


@dataclass
class _Tally:
    """One way of counting the history, adding only messages appended since it last ran."""

    count: Callable[[Message], int]
    epoch: int = -1
    counted: int = 0
    tokens: int = 0

    def history(self, state: SessionState) -> int:
        if state.epoch != self.epoch or len(state.history) < self.counted:
            self.epoch, self.counted, self.tokens = state.epoch, 0, 0
        for message in state.history[self.counted :]:
            self.tokens += self.count(message)
        self.counted = len(state.history)
        return self.tokens


def _learned(scale: float | None, ratio: float, bounds: tuple[float, float]) -> float:
    """The scale after one more reported prompt (bounded, smoothed)."""
    ratio = min(bounds[1], max(bounds[0], ratio))
    return ratio if scale is None else 0.5 * scale + 0.5 * ratio


@dataclass
class TokenLedger:
    """Keeps the estimated size of the next request without recounting the history each step."""

    prefix_tokens: int = 0  # system prompt and tool schemas: counted once
    _exact: _Tally = field(default_factory=lambda: _Tally(count_message))
    _rough: _Tally = field(default_factory=lambda: _Tally(rough_count_message))
    _scale: float | None = None  # the provider's prompt tokens per exact token, once reported
    _rough_scale: float | None = None  # the same per rough token
    _last: tuple[int, int | None] = (0, None)  # the last estimate's raw rough and exact sizes

    def history_tokens(self, state: SessionState) -> int:
        """Exact tokens of the history."""
        return self._exact.history(state)

    def estimate(self, state: SessionState, extra: int = 0, far_below: int = 0) -> int:
        """The next request's prompt tokens, scaled by how the provider's counts compared to ours. When the
        rough size is under `far_below` and a report has calibrated it, the rough tally answers."""
        rough = self.prefix_tokens + self._rough.history(state) + extra
        if self._rough_scale is not None and rough < far_below:
            self._last = (rough, None)
            return int(rough * self._rough_scale)
        exact = self.prefix_tokens + self._exact.history(state) + extra
        self._last = (rough, exact)
        return int(exact * (self._scale or 1.0))

    def reconcile(self, reported: int) -> None:
        """Learn from the prompt tokens the provider reported for the request last estimated."""
        rough, exact = self._last
        if reported <= 0 or rough <= 0:
            return
        self._rough_scale = _learned(self._rough_scale, reported / rough, ROUGH_SCALE_BOUNDS)
        if exact:
            self._scale = _learned(self._scale, reported / exact, EXACT_SCALE_BOUNDS)
