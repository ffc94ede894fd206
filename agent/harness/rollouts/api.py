"""The rollout API for trainers: run a task against a model endpoint and get its ATIF trajectories and reward.

A task is a git repository and a prompt judged by a test command (a `keel batch` attempt: its own worktree),
or a Harbor task folder (a `keel bench` trial: its environment and verifier). K rollouts of a task form a
GRPO group with advantages. Many run at once in this process, or as Ray tasks (`backend="ray"`).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from atif import Trajectory
from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter, ValidationError, model_validator

from keel.agent.core.errors import UsageError
from keel.agent.core.settings import SessionSettings
from keel.agent.harness.batch.results import ResultRow
from keel.agent.harness.rollouts.reward import Reward, RewardConfig

if TYPE_CHECKING:
    from keel.agent.harness.rollouts.runs import AttemptTrajectory
    from keel.agent.harness.rollouts.training import TrainingRecord, TrainingSequence


class RolloutTask(BaseModel):
    """One task: `harbor` (a Harbor task folder), or `prompt` in the git repository `repo`, passed when
    `test` (a shell command run in the worktree afterwards) exits 0."""

    model_config = ConfigDict(extra="forbid")

    id: str
    prompt: str | None = None
    repo: Path | None = None
    ref: str | None = None
    setup: list[str] = []
    test: str | None = None
    harbor: Path | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> RolloutTask:
        if self.harbor is None and (self.prompt is None or self.repo is None):
            raise ValueError(
                "a rollout task needs `harbor` (a task folder), or `prompt` and `repo`"
            )
        return self


class Rollout(BaseModel):
    """One rollout: its trajectories (one per summary segment, linked), reward and, in a group, advantage."""

    task_id: str
    attempt: int
    status: str
    reason: str = ""
    reward: Reward | None = None
    advantage: float | None = None
    tokens: int = 0
    trajectories: list[Trajectory] = []
    session_log: Path | None = None

    def training_records(self, policy_version: str | None = None) -> list[TrainingRecord]:
        """One record per model call of its session log (its subagents' as `aux`), each with its reward; the
        last call's stop reason from the rollout's status. `policy_version` for calls the server did not tag."""
        from keel.agent.harness.rollouts.training import log_training_records

        if self.session_log is None:
            return []
        return log_training_records(
            self.session_log,
            reward=self.reward,
            advantage=self.advantage,
            status=self.status,
            policy_version=policy_version,
        )

    def sequences(self, policy_version: str | None = None) -> list[TrainingSequence]:
        """Its records joined into append-only sequences with response masks (verl's shape)."""
        from keel.agent.harness.rollouts.training import training_sequences

        return training_sequences(self.training_records(policy_version))


class RolloutGroup(BaseModel):
    """K rollouts of one task with GRPO's group statistics (over the rollouts that have a reward)."""

    task_id: str
    mean: float | None
    std: float | None
    rollouts: list[Rollout]


# what keel's requests are made of: sampling parameters may not replace them
NOT_SAMPLING = frozenset({"model", "messages", "tools", "stream", "stream_options", "n"})
_SAMPLING = TypeAdapter(dict[str, JsonValue])


def sampling_parameters(sampling: Mapping[str, Any] | None) -> dict[str, JsonValue]:
    """A trainer's sampling parameters as every request will carry them; UsageError for what can't be one."""
    taken = sorted(NOT_SAMPLING & set(sampling or {}))
    if taken:
        raise UsageError(
            f"sampling parameters can't set {', '.join(taken)}: keel builds those fields of each request; "
            "pass only how to sample (temperature, top_p, top_k, max_tokens, ...)"
        )
    try:
        return _SAMPLING.validate_python(dict(sampling or {}))
    except ValidationError as exc:
        raise UsageError(
            f"sampling parameters must be JSON values: {exc.errors()[0]['msg']}"
        ) from None


def _settings(
    model: str,
    api_base: str | None,
    record_tokens: bool,
    sampling: Mapping[str, Any] | None = None,
    **flags: Any,
) -> SessionSettings:
    from keel.agent.core.api import session_settings

    given = {key: value for key, value in flags.items() if value is not None}
    settings = session_settings(
        Path.cwd(), model=model, api_base=api_base, record_tokens=record_tokens, **given
    )
    return settings.model_copy(update={"sampling": sampling_parameters(sampling)})


def _specs(task: RolloutTask, attempts: range, settings: SessionSettings, out: Path) -> list[Any]:
    if task.harbor is not None:
        from keel.agent.harness.bench.tasks import load_task
        from keel.agent.harness.bench.trial import TrialSpec

        bench_task = load_task(task.harbor).model_copy(update={"id": task.id})
        return [
            TrialSpec(
                task=bench_task, attempt=n, settings=settings, out_dir=out, environment="local"
            )
            for n in attempts
        ]
    from keel.agent.core.api.git import repo_top
    from keel.agent.harness.batch.runner import AttemptSpec
    from keel.agent.harness.batch.tasks import Task

    assert task.repo is not None and task.prompt is not None  # checked by the model
    batch_task = Task(
        id=task.id, prompt=task.prompt, repo=repo_top(task.repo.resolve()), ref=task.ref,
        setup=task.setup, test=task.test,
    )  # fmt: skip
    return [
        AttemptSpec(task=batch_task, attempt=n, settings=settings, out_dir=out) for n in attempts
    ]


def _rollout(row: ResultRow, entry: AttemptTrajectory) -> Rollout:
    """A finished attempt's rollout: its reward and advantage from its group, its trajectories from its
    session log (carrying both)."""
    from keel.agent.harness.rollouts.atif import log_trajectories

    result = Rollout(
        task_id=row.id, attempt=row.attempt, status=row.status, reason=row.reason, tokens=row.tokens,
        reward=entry.reward, advantage=entry.advantage,
    )  # fmt: skip
    log = Path(row.session_log) if row.session_log else None
    if log is not None and log.is_file():
        extra = {
            "reward": result.reward.model_dump() if result.reward else None,
            "advantage": result.advantage,
        }
        result.trajectories = log_trajectories(log, f"{row.id}.{row.attempt}.json", extra)
        result.session_log = log
    return result


def _groups(rows: Sequence[ResultRow], config: RewardConfig) -> list[RolloutGroup]:
    """A RolloutGroup per task, its rewards and advantages as `--trajectories` computes them."""
    from keel.agent.harness.rollouts.runs import task_groups

    return [
        RolloutGroup(
            task_id=group.id,
            mean=group.mean,
            std=group.std,
            rollouts=[_rollout(r, e) for r, e in zip(task_rows, group.attempts, strict=True)],
        )
        for group, task_rows in task_groups(rows, config)
    ]


async def _run_specs(
    specs: list[Any], concurrency: int, backend: str, address: str | None
) -> list[ResultRow]:
    rows: list[ResultRow] = []
    if backend == "ray":
        from keel.agent.harness.batch.ray_backend import attempt_in_worker, run_ray
        from keel.agent.harness.bench.results import BenchRow
        from keel.agent.harness.bench.trial import TrialSpec, trial_in_worker

        trials = [spec for spec in specs if isinstance(spec, TrialSpec)]
        attempts = [spec for spec in specs if not isinstance(spec, TrialSpec)]
        for group, worker, row_type in (
            (trials, trial_in_worker, BenchRow),
            (attempts, attempt_in_worker, ResultRow),
        ):
            if group:
                await asyncio.to_thread(
                    run_ray,
                    group,
                    concurrency,
                    rows.append,
                    address,
                    lambda text: None,
                    worker,
                    row_type,
                )
        return rows
    from keel.agent.harness.batch.runner import run_attempt, run_local
    from keel.agent.harness.bench.trial import TrialSpec, run_trial

    async def run(spec: Any, stop: asyncio.Event) -> ResultRow:
        return await (
            run_trial(spec, stop) if isinstance(spec, TrialSpec) else run_attempt(spec, stop)
        )

    await run_local(specs, concurrency, rows.append, asyncio.Event(), run)
    return rows


async def rollouts(
    tasks: Sequence[RolloutTask],
    *,
    model: str,
    api_base: str | None = None,
    k: int = 1,
    concurrency: int = 8,
    record_tokens: bool = True,
    budget: int | None = None,
    max_steps: int | None = None,
    context_window: int | None = None,
    reward_config: RewardConfig | None = None,
    out: Path | None = None,
    backend: Literal["local", "ray"] = "local",
    ray_address: str | None = None,
    sampling: Mapping[str, Any] | None = None,
    append_only: bool = False,
) -> list[RolloutGroup]:
    """K rollouts of each task, `concurrency` at once; a group per task with rewards and advantages.

    `out` keeps each attempt's logs and patches (default: a folder under the system's temp dir, kept:
    the session logs themselves live in keel's home as every session's do). `sampling` goes into every
    model call's request body as given (temperature, top_p, top_k, max_tokens...: vLLM's names).
    `append_only` keeps each call's status line in the history, so that a rollout's prompts extend each other
    and its calls join into one sequence (`Rollout.sequences`) up to a masking pass or a summary."""
    config = reward_config or RewardConfig()
    settings = _settings(
        model,
        api_base,
        record_tokens,
        sampling,
        budget=budget,
        max_steps=max_steps,
        context_window=context_window,
    )
    if append_only:
        context = settings.context.model_copy(update={"append_only": True})
        settings = settings.model_copy(update={"context": context})
    out = out or Path(tempfile.mkdtemp(prefix=f"keel-rollouts-{time.strftime('%Y%m%d-%H%M%S')}-"))
    specs = [spec for task in tasks for spec in _specs(task, range(1, k + 1), settings, out)]
    rows = await _run_specs(specs, concurrency, backend, ray_address)
    return _groups(rows, config)


async def rollout(task: RolloutTask, **options: Any) -> Rollout:
    """One rollout of one task (the options of `rollouts`, without k)."""
    (group,) = await rollouts([task], k=1, **options)
    return group.rollouts[0]
