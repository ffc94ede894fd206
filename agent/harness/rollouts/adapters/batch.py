"""One keel rollout per item of a trainer's batch, in the batch's order: the items naming one task form its group
(K rollouts of it), as GRPO's repeated prompts do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from keel.agent.core.errors import KeelError
from keel.agent.harness.rollouts.api import Rollout, RolloutTask, rollouts


async def rollouts_in_order(tasks: Sequence[RolloutTask], **options: Any) -> list[Rollout]:
    """A rollout for each task given, in order: a task given K times gets K rollouts (attempts 1..K), run
    together by `keel.rollouts` with `options` (model, api_base, concurrency, budget…)."""
    counts: dict[str, int] = {}
    unique: dict[str, RolloutTask] = {}
    for task in tasks:
        counts[task.id] = counts.get(task.id, 0) + 1
        unique.setdefault(task.id, task)
    by_k: dict[int, list[RolloutTask]] = {}
    for task_id, k in counts.items():
        by_k.setdefault(k, []).append(unique[task_id])
    done: dict[str, list[Rollout]] = {}
    for k, group in by_k.items():
        for result in await rollouts(group, k=k, **options):
            done[result.task_id] = sorted(result.rollouts, key=lambda r: r.attempt)
    missing = [task_id for task_id in counts if len(done.get(task_id, [])) != counts[task_id]]
    if missing:
        raise KeelError(f"keel ran no rollout (or too few) for the tasks {missing}")
    return [done[task.id].pop(0) for task in tasks]
