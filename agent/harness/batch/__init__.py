"""`keel batch`: many tasks, many attempts, each agent in its own worktree, locally or on Ray."""
