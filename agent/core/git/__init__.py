"""Git services: checkpoints in a shadow store, and worktrees for agents."""
