"""keel as TRL's `rollout_func` (`GRPOTrainer(rollout_func=…)`, trl >= 0.24, experimental there): one sample per
prompt given, each a keel rollout of the task the prompt names.

TRL calls `rollout_func(prompts, trainer)` with its batch's prompts, each repeated `num_generations` times, and
wants back `prompt_ids`, `completion_ids` and `logprobs` (one list per sample); `env_mask` marks the completion's
tokens the model sampled (1) against tool, user and system tokens (0); every other key is passed to the reward
functions, per sample. A sample is its rollout's first sequence: the first call's prompt, then every call
whose prompt extends the last append-only, `env_mask` and logprobs aligned. A rollout's later sequences (after
a self-summary or any other reset) are not in it: `keel_sequences` counts them; train on every call with the
SkyRL adapter or `Rollout.training_records()`. The framework is not imported.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from keel.agent.core.errors import UsageError
from keel.agent.harness.rollouts.adapters.batch import rollouts_in_order
from keel.agent.harness.rollouts.api import Rollout, RolloutTask
from keel.agent.harness.rollouts.training import TrainingSequence

REQUIRED = ("prompt_ids", "completion_ids", "logprobs")
# GRPOConfig's fields for how its own generation samples, sent by those names to the policy's server
TRAINER_SAMPLING = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty")


def trainer_sampling(trainer: Any) -> dict[str, Any]:
    """How the trainer's config says to sample (`trainer.args`), the fields it leaves unset left out."""
    args = getattr(trainer, "args", None)
    found = {name: getattr(args, name, None) for name in TRAINER_SAMPLING}
    return {name: value for name, value in found.items() if value is not None}


def _task_id(prompt: Any) -> str:
    """The task a prompt names: the prompt itself, or a conversation's last user message."""
    if isinstance(prompt, str):
        return prompt
    users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    return content if isinstance(content, str) else ""


def _first(rollout: Rollout) -> tuple[TrainingSequence | None, int]:
    """The rollout's first agent sequence, and how many sequences it has."""
    sequences = [s for s in rollout.sequences() if s.role != "aux"]
    agent = [s for s in sequences if s.role == "agent"]
    return (agent[0] if agent else None), len(sequences)


def trl_batch(rollouts: Sequence[Rollout]) -> dict[str, list[Any]]:
    """The rollouts as rollout_func's return value: the three fields TRL requires, `env_mask`, and the reward
    inputs `keel_total` (the reward, None without a verdict: TRL leaves a None out of the group), its parts,
    `keel_advantage`, `keel_stop_reason`, `keel_task_id`, `keel_status` and `keel_sequences`."""
    batch: dict[str, list[Any]] = {
        key: []
        for key in (
            *REQUIRED, "env_mask", "keel_total", "keel_outcome", "keel_penalty", "keel_advantage",
            "keel_stop_reason", "keel_task_id", "keel_status", "keel_sequences",
        )
    }  # fmt: skip
    for rollout in rollouts:
        sequence, count = _first(rollout)
        ids = sequence.response_ids if sequence else []
        logprobs = sequence.response_logprobs if sequence else None
        reward = rollout.reward
        row: dict[str, Any] = {
            "prompt_ids": sequence.prompt_ids if sequence else [],
            "completion_ids": ids,
            "logprobs": logprobs if logprobs is not None else [None] * len(ids),
            "env_mask": sequence.response_mask if sequence else [],
            "keel_total": reward.total if reward else None,
            "keel_outcome": reward.outcome if reward else None,
            "keel_penalty": reward.penalty if reward else None,
            "keel_advantage": rollout.advantage,
            "keel_stop_reason": sequence.stop_reason if sequence else None,
            "keel_task_id": rollout.task_id,
            "keel_status": rollout.status,
            "keel_sequences": count,
        }
        for key, value in row.items():
            batch[key].append(value)
    return batch


def keel_reward(
    prompts: Sequence[Any], completions: Sequence[Any], keel_total: Sequence[float | None], **_: Any
) -> list[float | None]:
    """A TRL reward function: each sample's keel reward (verifier outcome less the length penalty)."""
    return list(keel_total)


def keel_rollout_func(
    tasks: Mapping[str, RolloutTask] | Sequence[RolloutTask],
    *,
    model: str,
    api_base: str | None = None,
    **options: Any,
) -> Callable[[list[Any], Any], dict[str, list[Any]]]:
    """A rollout_func for GRPOTrainer: each prompt (a task id, or a conversation whose last user message is
    one) is a keel rollout of that task against `api_base` (the policy's vLLM server), `options` as
    `keel.rollouts` takes them. Every call samples as the trainer's config says (TRAINER_SAMPLING), under
    `options`' own `sampling`. Pass `reward_funcs=[keel_reward]` to train on keel's rewards. A sample is a
    rollout's first sequence, so prompts are append-only unless `append_only=False` says otherwise (then a
    sample is the rollout's first call, as every call's prompt is a reset)."""
    known = dict(tasks) if isinstance(tasks, Mapping) else {task.id: task for task in tasks}

    def rollout_func(prompts: list[Any], trainer: Any = None) -> dict[str, list[Any]]:
        names = [_task_id(prompt) for prompt in prompts]
        unknown = sorted({name for name in names if name not in known})
        if unknown:
            raise UsageError(
                f"the prompts {unknown[:5]} name no keel task; a prompt is the id of one of: "
                f"{sorted(known)[:10]}"
            )
        selected = [known[name] for name in names]
        sampling = {**trainer_sampling(trainer), **(options.get("sampling") or {})}
        given = {"append_only": True, **options, "sampling": sampling}
        found = asyncio.run(rollouts_in_order(selected, model=model, api_base=api_base, **given))
        return trl_batch(found)

    return rollout_func
