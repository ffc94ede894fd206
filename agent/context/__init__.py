"""Context and budgets: token accounting, observation masking, self-summarization, the budget status line."""

from keel.agent.context.manager import ContextManager

__all__ = ["ContextManager"]
