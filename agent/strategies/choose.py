"""Which strategy a session's profile calls for."""

from __future__ import annotations

from keel.agent.config import LoopSettings
from keel.agent.profile import ModelProfile
from keel.agent.strategies.base import Strategy
from keel.agent.strategies.capable import Capable
from keel.agent.strategies.small import SmallModel


def strategy_for(profile: ModelProfile, policy: LoopSettings) -> Strategy:
    """The small-model strategy for a compact profile, the capable one otherwise."""
    kind = SmallModel if profile.compact else Capable
    return kind(profile, policy)
