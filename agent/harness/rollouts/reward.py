"""Rewards for training: the verifier's outcome less a concave length penalty, and GRPO's group advantages.

Pure functions over pydantic values: nothing here reads a file or a clock.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LengthPenalty(Frozen):
    """`coef · log1p(tokens / scale)`, at most `cap`: each extra token costs less than the one before, so an
    easy task is pushed to finish cheaply while a hard one may spend more."""

    coef: float = Field(default=0.1, ge=0)
    scale: float = Field(
        default=10_000, gt=0, description="tokens at which the penalty is coef·ln 2"
    )
    cap: float = Field(default=0.5, ge=0)

    def __call__(self, tokens: int) -> float:
        return min(self.cap, self.coef * math.log1p(max(0, tokens) / self.scale))


class RewardConfig(Frozen):
    """How a trajectory's reward is made from its outcome and its length."""

    penalty: LengthPenalty = LengthPenalty()
    std: Literal["sample", "population"] = Field(
        default="sample",
        description="the group std of GRPO's advantage: sample (n-1, as TRL's torch .std()) or population",
    )
    eps: float = Field(default=1e-4, gt=0, description="added to the std (TRL's value)")


class Reward(Frozen):
    """One trajectory's reward and its parts: `total = outcome - penalty`."""

    outcome: float
    tokens: int
    penalty: float
    total: float


class GroupAdvantages(Frozen):
    """K rollouts of one task: the group's mean and std of the totals, and each rollout's advantage
    `(total - mean) / (std + eps)`, in the order given."""

    mean: float
    std: float
    std_kind: Literal["sample", "population"]
    eps: float
    advantages: list[float]


def outcome_of_exit_code(exit_code: int) -> float:
    """A test command's verdict: exit 0 passes (1.0), anything else fails (0.0)."""
    return 1.0 if exit_code == 0 else 0.0


def reward(outcome: float, tokens: int, config: RewardConfig | None = None) -> Reward:
    """The outcome (0/1 from a test command, or a Harbor task's float) less the length penalty of `tokens`."""
    penalty = (config or RewardConfig()).penalty(tokens)
    return Reward(outcome=outcome, tokens=tokens, penalty=penalty, total=outcome - penalty)


def group_advantages(
    totals: Sequence[float], config: RewardConfig | None = None
) -> GroupAdvantages:
    """GRPO's advantages for one task's rollouts; a group of one (or with equal totals) has std 0, and its
    advantages are 0: there is nothing to prefer."""
    config = config or RewardConfig()
    values = list(totals)
    mean = statistics.fmean(values) if values else 0.0
    if len(values) < 2:
        std = 0.0
    elif config.std == "sample":
        std = statistics.stdev(values)
    else:
        std = statistics.pstdev(values)
    return GroupAdvantages(
        mean=mean,
        std=std,
        std_kind=config.std,
        eps=config.eps,
        advantages=[(value - mean) / (std + config.eps) for value in values],
    )
