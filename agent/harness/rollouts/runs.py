"""`--trajectories` of `keel batch` and `keel bench`: each attempt's trajectories with its reward, and each
task's GRPO group, written under OUT/trajectories/ after the run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from keel.agent.core.api.sessions import SessionState, fold
from keel.agent.core.protocol import AnyEvent
from keel.agent.harness.batch.results import ResultRow, latest
from keel.agent.harness.batch.runner import attempt_file
from keel.agent.harness.bench.results import BenchRow
from keel.agent.harness.rollouts.atif import log_trajectories, write_trajectories
from keel.agent.harness.rollouts.reward import Reward, RewardConfig, group_advantages, reward

# no outcome to learn from
NO_VERDICT = ("interrupted", "skipped", "error", "setup_failed", "verifier_failed")
GROUPS_FILE = "groups.jsonl"


class AttemptTrajectory(BaseModel):
    """One attempt in its group: its reward and advantage, and where its trajectories are (relative to
    OUT/trajectories), or why it has none."""

    attempt: int
    status: str
    reward: Reward | None = None
    advantage: float | None = None
    trajectory: str | None = None
    segments: int = 0
    reason: str = ""


class TaskGroup(BaseModel):
    """The attempts of one task (a line of groups.jsonl); mean and std are over the rewarded attempts."""

    id: str
    rewarded: int
    mean: float | None
    std: float | None
    std_kind: str
    eps: float
    attempts: list[AttemptTrajectory]


def session_tokens(events: Sequence[AnyEvent]) -> int:
    """The session's total tokens, as its folded state counts them (every call, summaries included)."""
    return fold(events, SessionState(session_id="")).usage.total_tokens


def row_outcome(row: ResultRow) -> float | None:
    """A bench attempt's reward from its verifier, a batch attempt's test verdict as 0/1; None without a
    verdict (interrupted, skipped, errored, setup failed)."""
    if row.status in NO_VERDICT:
        return None
    if isinstance(row, BenchRow) and row.reward is not None:
        return row.reward
    return 1.0 if row.passed else 0.0


def _group(task_id: str, rows: list[ResultRow], config: RewardConfig) -> TaskGroup:
    attempts = []
    for row in rows:
        outcome = row_outcome(row)
        entry = AttemptTrajectory(attempt=row.attempt, status=row.status)
        if outcome is None:
            entry.reason = f"no verdict ({row.status})"
        else:
            entry.reward = reward(outcome, row.tokens, config)
        attempts.append(entry)
    rewarded = [entry for entry in attempts if entry.reward is not None]
    stats = group_advantages([entry.reward.total for entry in rewarded if entry.reward], config)
    for entry, advantage in zip(rewarded, stats.advantages, strict=True):
        entry.advantage = advantage
    return TaskGroup(
        id=task_id,
        rewarded=len(rewarded),
        mean=stats.mean if rewarded else None,
        std=stats.std if rewarded else None,
        std_kind=stats.std_kind,
        eps=stats.eps,
        attempts=attempts,
    )


def task_groups(
    rows: Sequence[ResultRow], config: RewardConfig
) -> list[tuple[TaskGroup, list[ResultRow]]]:
    """Each task's group (rewards, GRPO advantages) with its rows: the newest of each attempt, in
    attempt order, as the group's `attempts` list them."""
    by_task: dict[str, list[ResultRow]] = {}
    for row in sorted(latest(list(rows)).values(), key=lambda r: r.key):
        by_task.setdefault(row.id, []).append(row)
    return [
        (_group(task_id, task_rows, config), task_rows) for task_id, task_rows in by_task.items()
    ]


def _write_attempt(out: Path, row: ResultRow, group: TaskGroup, entry: AttemptTrajectory) -> None:
    log = Path(row.session_log) if row.session_log else None
    if log is None or not log.is_file():
        entry.reason = "; ".join(filter(None, [entry.reason, "no session log here"]))
        return
    first = attempt_file(out, row.id, row.attempt, "trajectories", ".json")
    extra = {
        "attempt": {"task": row.id, "attempt": row.attempt, "status": row.status},
        "reward": entry.reward.model_dump() if entry.reward else None,
        "advantage": entry.advantage,
        "group": {
            "mean": group.mean,
            "std": group.std,
            "std_kind": group.std_kind,
            "k": group.rewarded,
        },
    }
    paths = write_trajectories(log_trajectories(log, first.name, extra), first)
    entry.trajectory, entry.segments = first.name, len(paths)


def write_run_trajectories(
    out: Path, rows: Sequence[ResultRow], config: RewardConfig | None = None
) -> list[TaskGroup]:
    """Every attempt's trajectories as OUT/trajectories/TASK.ATTEMPT.json (continuations beside it, as
    TASK.ATTEMPT.cont-N.json) with its reward, advantage and group in `extra`; the groups in groups.jsonl."""
    groups = []
    for group, task_rows in task_groups(rows, config or RewardConfig()):
        for row, entry in zip(task_rows, group.attempts, strict=True):
            _write_attempt(out, row, group, entry)
        groups.append(group)
    directory = out / "trajectories"
    directory.mkdir(parents=True, exist_ok=True)
    lines = "".join(group.model_dump_json() + "\n" for group in groups)
    (directory / GROUPS_FILE).write_text(lines, encoding="utf-8")
    return groups
