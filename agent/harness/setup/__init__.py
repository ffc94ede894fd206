"""`keel setup`: the model proposes how to install a repository and run its tests; keel verifies the recipe
in fresh worktrees and writes it down. `keel bench new` builds a Harbor task from a commit with it."""
