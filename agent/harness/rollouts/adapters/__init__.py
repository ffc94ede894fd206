"""Adapters that make keel the rollout engine of RL frameworks (SkyRL, TRL): thin, over the rollout API."""
