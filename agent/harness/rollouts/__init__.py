"""Rollouts for training: ATIF trajectories from session logs, rewards and GRPO advantages."""
