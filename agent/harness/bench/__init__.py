"""keel bench: Harbor-format tasks, environments, verifier, results and reports."""
