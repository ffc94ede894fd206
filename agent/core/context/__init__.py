"""Context and budgets: token accounting, observation masking, self-summarization, the budget status line."""
