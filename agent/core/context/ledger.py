"""Running token totals of the context: each message counted once, reconciled with what the provider reports."""

from __future__ import annotations

from dataclasses import dataclass

from keel.agent.core.model.tokens import count_message
from keel.agent.core.state import SessionState


@dataclass
class TokenLedger:
    """Keeps the estimated size of the next request without recounting the history each step."""

    prefix_tokens: int = 0  # system prompt and tool schemas: counted once
    _epoch: int = -1
    _counted: int = 0
    _history_tokens: int = 0
    _scale: float = 1.0

    def history_tokens(self, state: SessionState) -> int:
        """Tokens of the history, adding only messages appended since the last call."""
        if state.epoch != self._epoch or len(state.history) < self._counted:
            self._epoch, self._counted, self._history_tokens = state.epoch, 0, 0
        for message in state.history[self._counted :]:
            self._history_tokens += count_message(message)
        self._counted = len(state.history)
        return self._history_tokens

    def estimate(self, state: SessionState, extra: int = 0) -> int:
        """The next request's prompt tokens, scaled by how the provider's counts compared to ours."""
        return int((self.prefix_tokens + self.history_tokens(state) + extra) * self._scale)

    def reconcile(self, estimated_raw: int, reported: int) -> None:
        """Learn the ratio between the provider's prompt tokens and our count (bounded, smoothed)."""
        if estimated_raw <= 0 or reported <= 0:
            return
        ratio = min(2.0, max(0.5, reported / estimated_raw))
        self._scale = ratio if self._scale == 1.0 else 0.5 * self._scale + 0.5 * ratio

    @property
    def scale(self) -> float:
        return self._scale
