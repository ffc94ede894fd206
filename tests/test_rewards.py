"""Rewards and GRPO advantages: values worked out by hand, and the length penalty's shape."""

from __future__ import annotations

import itertools
import math

import pytest

from keel.agent.harness.rollouts.reward import (
    LengthPenalty,
    RewardConfig,
    group_advantages,
    outcome_of_exit_code,
    reward,
)


def test_outcome_of_a_test_command():
    assert outcome_of_exit_code(0) == 1.0
    assert outcome_of_exit_code(1) == 0.0 and outcome_of_exit_code(137) == 0.0


def test_reward_is_outcome_less_the_penalty_by_hand():
    config = RewardConfig(penalty=LengthPenalty(coef=0.1, scale=10_000, cap=0.5))
    passed = reward(1.0, 10_000, config)  # 0.1 · ln(1 + 1) = 0.0693147…
    assert passed.penalty == pytest.approx(0.0693147, abs=1e-6)
    assert passed.total == pytest.approx(0.9306853, abs=1e-6)
    assert (passed.outcome, passed.tokens) == (1.0, 10_000)
    harbor = reward(0.25, 30_000, config)  # a Harbor task's partial reward; 0.1 · ln 4 = 0.1386294…
    assert harbor.total == pytest.approx(0.25 - 0.1386294, abs=1e-6)
    assert reward(1.0, 0, config).penalty == 0.0
    capped = reward(0.0, 10**12, config)  # 0.1 · ln(1e8) = 1.84 > cap
    assert capped.penalty == 0.5 and capped.total == -0.5


def test_penalty_is_concave_increasing_below_its_cap():
    penalty = LengthPenalty(coef=0.2, scale=5_000, cap=10.0)
    points = [penalty(tokens) for tokens in range(0, 400_001, 2_000)]
    assert points[-1] < penalty.cap  # the whole range is below the cap
    first = [b - a for a, b in itertools.pairwise(points)]
    second = [b - a for a, b in itertools.pairwise(first)]
    assert all(d > 0 for d in first)  # more tokens always cost more…
    assert all(d < 0 for d in second)  # …but each extra token less than the one before
    # a linear penalty would fail the same check: the test can fail
    linear = [0.2 * tokens / 5_000 for tokens in range(0, 400_001, 2_000)]
    linear_second = [c - 2 * b + a for a, b, c in zip(linear, linear[1:], linear[2:], strict=False)]
    assert not all(d < 0 for d in linear_second)


def test_group_advantages_by_hand_sample_std():
    # totals 1, 0, 0, 1: mean 0.5; sample std sqrt((4 · 0.25) / 3) = 0.5773503
    stats = group_advantages([1.0, 0.0, 0.0, 1.0], RewardConfig(eps=1e-4))
    assert stats.mean == 0.5 and stats.std_kind == "sample"
    assert stats.std == pytest.approx(0.5773503, abs=1e-7)
    expected = 0.5 / (0.5773503 + 1e-4)
    assert stats.advantages == pytest.approx([expected, -expected, -expected, expected], abs=1e-6)


def test_group_advantages_by_hand_population_std():
    # totals 0.9, 0.5, 0.1: mean 0.5; population std sqrt((0.16 + 0 + 0.16) / 3) = 0.3265986
    config = RewardConfig(std="population", eps=1e-6)
    stats = group_advantages([0.9, 0.5, 0.1], config)
    assert stats.mean == pytest.approx(0.5)
    assert stats.std == pytest.approx(math.sqrt(0.32 / 3))
    assert stats.advantages == pytest.approx(
        [0.4 / (0.3265986 + 1e-6), 0.0, -0.4 / (0.3265986 + 1e-6)]
    )


def test_a_group_with_nothing_to_prefer_has_zero_advantages():
    assert group_advantages([0.7]).advantages == [0.0]
    same = group_advantages([1.0, 1.0, 1.0])
    assert same.std == 0.0 and same.advantages == [0.0, 0.0, 0.0]
    assert group_advantages([]).advantages == []
