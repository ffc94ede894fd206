"""Which strategy a session's profile calls for."""

from __future__ import annotations

from keel.agent.core.config import LoopSettings
from keel.agent.core.profile import ModelProfile
from keel.agent.core.strategies.base import Strategy
from keel.agent.core.strategies.capable import Capable
from keel.agent.core.strategies.small import SmallModel


def strategy_for(profile: ModelProfile, policy: LoopSettings) -> Strategy:
    """The small-model strategy for a compact profile, the capable one otherwise."""
    kind = SmallModel if profile.compact else Capable
    return kind(profile, policy)
