"""keel as a SkyRL generator (skyrl-train's `GeneratorInterface`), step-wise: one sample per model call, the
self-summaries included, every call of a rollout with its final reward; `is_last_step` marks a rollout's last.

SkyRL calls `await generator.generate(input_batch)` with a `GeneratorInput` (prompts, env_extras,
trajectory_ids…) and trains on the `GeneratorOutput` returned, in the input's order. Each input item is one
keel rollout of the task its `env_extras["keel_task"]` gives (a RolloutTask or its dict), or of the task
`tasks` maps its `trajectory_ids[i].instance_id` to. The framework is not imported: the dicts below carry
the fields of skyrl_train/generators/base.py (skyrl-train 0.3.1), checked against it by tests/test_skyrl_types.py.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from keel.agent.core.errors import UsageError
from keel.agent.harness.rollouts.adapters.batch import rollouts_in_order
from keel.agent.harness.rollouts.api import Rollout, RolloutTask
from keel.agent.harness.rollouts.training import Role

STEP_ROLES: tuple[Role, ...] = ("agent", "self_summary")


@dataclass
class StepTrajectoryID:
    """A trajectory id in SkyRL's shape (`TrajectoryID` with its `step`), for a batch that came without ids."""

    instance_id: str
    repetition_id: int
    step: int | None = None

    def to_string(self) -> str:
        return f"{self.instance_id}_{self.repetition_id}"


class SkyRLOutput(TypedDict):
    """SkyRL's GeneratorOutput, step-wise: one entry per model call."""

    prompt_token_ids: list[list[int]]
    response_ids: list[list[int]]
    rewards: list[float]
    loss_masks: list[list[int]]
    stop_reasons: list[str] | None
    rollout_metrics: dict[str, Any] | None
    rollout_logprobs: list[list[float]] | None
    trajectory_ids: list[Any] | None
    is_last_step: list[bool] | None


def _task(batch: Mapping[str, Any], index: int, tasks: Mapping[str, RolloutTask]) -> RolloutTask:
    """The keel task of one input item: its env_extras' `keel_task`, else the task of its instance id."""
    extras = (batch.get("env_extras") or [None] * (index + 1))[index] or {}
    if "keel_task" in extras:
        return RolloutTask.model_validate(extras["keel_task"])
    ids = batch.get("trajectory_ids")
    instance = ids[index].instance_id if ids else None
    if isinstance(instance, str) and instance in tasks:
        return tasks[instance]
    raise UsageError(
        f"input {index} names no keel task: put a RolloutTask in its env_extras['keel_task'], or pass "
        f"`tasks` keyed by its trajectory id's instance_id ({instance!r})"
    )


def step_wise_output(
    rollouts: Sequence[Rollout],
    trajectory_ids: Sequence[Any] | None = None,
    roles: Collection[Role] = STEP_ROLES,
) -> SkyRLOutput:
    """The rollouts as SkyRL's step-wise output: a sample per recorded call whose role is in `roles`, with
    the rollout's reward total (0.0 without a verdict: the stop reason says why) and its trajectory id (the
    input's, copied with `step` set). `rollout_logprobs` is None unless every call has its logprobs."""
    prompts: list[list[int]] = []
    responses: list[list[int]] = []
    rewards: list[float] = []
    masks: list[list[int]] = []
    stops: list[str] = []
    ids: list[Any] = []
    last: list[bool] = []
    logprobs: list[list[float] | None] = []
    for number, rollout in enumerate(rollouts):
        records = [r for r in rollout.training_records() if r.role in roles]
        given = trajectory_ids[number] if trajectory_ids else None
        for step, record in enumerate(records):
            trajectory = copy.copy(given) or StepTrajectoryID(rollout.task_id, rollout.attempt - 1)
            trajectory.step = step
            prompts.append(record.prompt_ids)
            responses.append(record.completion_ids)
            rewards.append(record.reward.total if record.reward else 0.0)
            masks.append(record.loss_mask)
            stops.append(record.stop_reason)
            ids.append(trajectory)
            last.append(step == len(records) - 1)
            logprobs.append(record.logprobs)
    complete = [entry for entry in logprobs if entry is not None]
    rewarded = [r.reward.total for r in rollouts if r.reward is not None]
    metrics = {
        "keel/rollouts": len(rollouts),
        "keel/calls": len(prompts),
        "keel/mean_reward": sum(rewarded) / len(rewarded) if rewarded else None,
    }
    return SkyRLOutput(
        prompt_token_ids=prompts,
        response_ids=responses,
        rewards=rewards,
        loss_masks=masks,
        stop_reasons=stops,
        rollout_metrics=metrics,
        rollout_logprobs=complete if len(complete) == len(logprobs) else None,
        trajectory_ids=ids,
        is_last_step=last,
    )


class KeelGenerator:
    """A SkyRL generator (GeneratorInterface's `generate`) running keel rollouts of each input's task against
    the policy's OpenAI-compatible server (`api_base`, vLLM with token ids and logprobs returned); `options` go
    to `keel.rollouts` (concurrency, budget, max_steps, context_window, backend…). A batch's
    `sampling_params` go into every call's request, over `options`' own `sampling`."""

    def __init__(
        self,
        *,
        model: str,
        api_base: str | None = None,
        tasks: Mapping[str, RolloutTask] | None = None,
        roles: Collection[Role] = STEP_ROLES,
        **options: Any,
    ) -> None:
        self.model, self.api_base = model, api_base
        self.tasks = dict(tasks or {})
        self.roles = roles
        self.options = options

    async def generate(self, input_batch: Mapping[str, Any]) -> SkyRLOutput:
        """K rollouts per task (the batch's repeated items), their calls as step-wise samples."""
        count = len(input_batch["prompts"])
        tasks = [_task(input_batch, index, self.tasks) for index in range(count)]
        options = dict(self.options)
        if given := input_batch.get("sampling_params"):  # the trainer's, to every call unchanged
            options["sampling"] = {**(options.get("sampling") or {}), **given}
        found = await rollouts_in_order(tasks, model=self.model, api_base=self.api_base, **options)
        return step_wise_output(found, input_batch.get("trajectory_ids"), self.roles)
