"""The metrics of an ATIF export: one model call's (counts, cost, token ids and logprobs as recorded) and a
segment's totals."""

from __future__ import annotations

from typing import Any

from atif import FinalMetrics, Metrics, Step

from keel.agent.core.protocol import TokenUsage, TurnTokens
from keel.agent.harness.rollouts.call_tokens import UNKNOWN_PREFIX


def call_metrics(
    usage: TokenUsage, cost: float | None, tokens: TurnTokens | None, prompt: list[int] | None
) -> Metrics:
    """One call's metrics; token ids and logprobs only as recorded (`prompt`: its whole prompt, rebuilt from
    the log), a turn without them says why; the server's finish reason and policy version when recorded."""
    extra: dict[str, Any] = {}
    if tokens is not None:
        missing = tokens.missing
        if prompt is None and tokens.prompt_token_ids is not None:
            missing = missing or UNKNOWN_PREFIX
        extra = {
            "tokens_missing": missing,
            "finish_reason": tokens.finish_reason,
            "policy_version": tokens.policy_version,
        }
    return Metrics(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_tokens=usage.cached_tokens,
        cost_usd=cost,
        prompt_token_ids=prompt,
        completion_token_ids=tokens.completion_token_ids if tokens else None,
        logprobs=tokens.logprobs if tokens else None,
        extra={name: value for name, value in extra.items() if value} or None,
    )


def final_metrics(steps: list[Step]) -> FinalMetrics:
    """Sums over the segment's own model calls (copied steps are counted where they first happened)."""
    metrics = [s.metrics for s in steps if s.metrics is not None and not s.is_copied_context]
    costs = [m.cost_usd for m in metrics if m.cost_usd is not None]
    return FinalMetrics(
        total_prompt_tokens=sum(m.prompt_tokens or 0 for m in metrics),
        total_completion_tokens=sum(m.completion_tokens or 0 for m in metrics),
        total_cached_tokens=sum(m.cached_tokens or 0 for m in metrics),
        total_cost_usd=sum(costs) if costs else None,
        total_steps=len(steps),
    )
