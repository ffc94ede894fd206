"""Bench results: one row per attempt (results.jsonl, as `keel batch` writes it, with rewards and token
kinds), and the summary per task and overall: pass@1, pass@k, mean reward, tokens, cost, turns, time."""

from __future__ import annotations

import statistics
from pathlib import Path

from pydantic import BaseModel, ValidationError

from keel.agent.harness.batch.results import ResultRow, pass_at_k, save_summary
from keel.prompts import plural

# the task's environment failed (its build; its verifier gave no reward): no verdict on the agent
ENVIRONMENT_ERRORS = ("setup_failed", "verifier_failed")
# attempts without a verdict: no pass, no fail
UNJUDGED = ("interrupted", "skipped", *ENVIRONMENT_ERRORS)


class BenchRow(ResultRow):
    """One attempt of one Harbor task; `passed` is a full reward (1.0)."""

    agent: str = "keel"
    model: str | None = None
    category: str = ""
    reward: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    @property
    def judged(self) -> bool:
        return self.status not in UNJUDGED


def read_rows(path: Path) -> list[BenchRow]:
    """The rows of a results.jsonl; a torn or foreign line is skipped."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(BenchRow.model_validate_json(line))
        except ValidationError:
            continue
    return rows


class TaskResult(BaseModel):
    """One task's attempts, summed up."""

    id: str
    category: str
    attempts: int
    judged: int
    passed: int
    pass_at_1: float
    pass_at_k: float
    mean_reward: float | None
    median_tokens: float
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost: float | None
    mean_turns: float
    mean_seconds: float
    skipped: str = ""
    environment_error: str = ""  # why the environment gave no verdict, when no attempt has one


class BenchSummary(BaseModel):
    """A whole run: the means are over the tasks with a verdict; tokens are per attempt, medians per task."""

    label: str
    agent: str
    model: str | None
    k: int
    tasks: list[TaskResult]
    attempts: int
    errors: int
    # attempts without a verdict through the task's environment (not failures)
    environment_errors: int = 0
    interrupted: int
    skipped_tasks: int
    pass_at_1: float
    pass_at_k: float
    mean_reward: float
    median_tokens: float
    tokens: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost: float | None
    mean_turns: float
    wall_seconds: float


def _cost(rows: list[BenchRow]) -> float | None:
    costs = [row.cost for row in rows if row.cost is not None]
    return round(sum(costs), 6) if costs else None


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def _task(task_id: str, rows: list[BenchRow], k: int) -> TaskResult:
    judged = [row for row in rows if row.judged]
    passes = sum(row.passed for row in judged)
    rewards = [row.reward if row.reward is not None else 0.0 for row in judged]
    skipped = next((row.reason for row in rows if row.status == "skipped"), "")
    broken = next((row.reason for row in rows if row.status in ENVIRONMENT_ERRORS), "")
    return TaskResult(
        id=task_id,
        category=rows[0].category,
        attempts=len(rows),
        judged=len(judged),
        passed=passes,
        pass_at_1=pass_at_k(len(judged), passes, 1),
        pass_at_k=pass_at_k(len(judged), passes, k),
        mean_reward=_mean(rewards) if judged else None,
        median_tokens=statistics.median([row.tokens for row in judged]) if judged else 0.0,
        prompt_tokens=sum(row.prompt_tokens for row in rows),
        completion_tokens=sum(row.completion_tokens for row in rows),
        cached_tokens=sum(row.cached_tokens for row in rows),
        cost=_cost(rows),
        mean_turns=_mean([row.steps for row in judged]),
        mean_seconds=_mean([row.duration for row in judged]),
        skipped="" if judged else skipped,
        environment_error="" if judged else broken,
    )


def summarize(
    rows: list[BenchRow], k: int, wall_seconds: float = 0.0, label: str = ""
) -> BenchSummary:
    """Per task and overall; a task with no judged attempt (skipped, interrupted) is left out of the means."""
    by_task: dict[str, list[BenchRow]] = {}
    newest = {row.key: row for row in rows}  # a rerun attempt's newer row wins
    for row in sorted(newest.values(), key=lambda r: r.key):
        by_task.setdefault(row.id, []).append(row)
    tasks = [_task(task_id, task_rows, k) for task_id, task_rows in by_task.items()]
    scored = [task for task in tasks if task.judged]
    everything = [row for task_rows in by_task.values() for row in task_rows]
    first = everything[0] if everything else BenchRow(id="", attempt=0, status="skipped")
    return BenchSummary(
        label=label or (first.model if first.agent == "keel" and first.model else first.agent),
        agent=first.agent,
        model=first.model,
        k=k,
        tasks=tasks,
        attempts=len(everything),
        errors=sum(row.status == "error" for row in everything),
        environment_errors=sum(row.status in ENVIRONMENT_ERRORS for row in everything),
        interrupted=sum(row.status == "interrupted" for row in everything),
        skipped_tasks=len(tasks) - len(scored),
        pass_at_1=_mean([task.pass_at_1 for task in scored]),
        pass_at_k=_mean([task.pass_at_k for task in scored]),
        mean_reward=_mean([task.mean_reward or 0.0 for task in scored]),
        median_tokens=statistics.median([t.median_tokens for t in scored]) if scored else 0.0,
        tokens=sum(row.tokens for row in everything),
        prompt_tokens=sum(row.prompt_tokens for row in everything),
        completion_tokens=sum(row.completion_tokens for row in everything),
        cached_tokens=sum(row.cached_tokens for row in everything),
        cost=_cost(everything),
        mean_turns=_mean([task.mean_turns for task in scored]),
        wall_seconds=round(wall_seconds, 3),
    )


def _money(cost: float | None) -> str:
    return "-" if cost is None else f"${cost:.4f}"


def _no_verdict(task: TaskResult) -> str:
    """A task line's words when no attempt has a verdict: the environment failed, or it was skipped."""
    if task.environment_error:
        return f"environment error (no verdict): {task.environment_error}"
    return f"skipped: {task.skipped or 'no attempt judged'}"


def format_summary(summary: BenchSummary) -> str:
    """The table printed at the end of a run and saved as summary.txt."""
    k = summary.k
    width = max([len("task"), *(len(task.id) for task in summary.tasks)])
    at_k = f"  pass@{k:<2}" if k > 1 else ""
    header = f"{'task':<{width}}  passed  pass@1{at_k}  reward  {'tokens':>9}  turns  {'seconds':>7}  cost"
    lines = [header, "-" * len(header)]
    for task in summary.tasks:
        if not task.judged:
            lines.append(f"{task.id:<{width}}  {_no_verdict(task)}")
            continue
        shown_k = f"  {task.pass_at_k:>7.2f}" if k > 1 else ""
        lines.append(
            f"{task.id:<{width}}  {task.passed:>2}/{task.judged:<3}  {task.pass_at_1:>6.2f}{shown_k}"
            f"  {task.mean_reward or 0.0:>6.2f}  {task.median_tokens:>9,.0f}  {task.mean_turns:>5.1f}"
            f"  {task.mean_seconds:>7.1f}  {_money(task.cost)}"
        )
    lines.append("-" * len(header))
    scored = len(summary.tasks) - summary.skipped_tasks
    total_k = f" · pass@{k} {summary.pass_at_k:.3f}" if k > 1 else ""
    skipped = sum(not task.judged and not task.environment_error for task in summary.tasks)
    broken = summary.environment_errors
    environment = (
        f" · {plural(broken, 'environment error')} (no verdict, not a failure)" if broken else ""
    )
    lines.append(
        f"{summary.label}: {plural(scored, 'task')} judged"
        f" ({skipped} skipped, {plural(summary.errors, 'error')}){environment}"
        f" · pass@1 {summary.pass_at_1:.3f}{total_k} · mean reward {summary.mean_reward:.3f}"
        f" · median {summary.median_tokens:,.0f} tokens per task"
        f" ({summary.prompt_tokens:,} in, {summary.completion_tokens:,} out,"
        f" {summary.cached_tokens:,} cached) · cost {_money(summary.cost)}"
        f" · {summary.wall_seconds:.0f} s"
    )
    return "\n".join(lines)


def write_summary(out_dir: Path, summary: BenchSummary) -> str:
    """summary.json and summary.txt in the run's folder; returns the table."""
    return save_summary(out_dir, summary, format_summary(summary))


def read_summary(run_dir: Path) -> BenchSummary:
    return BenchSummary.model_validate_json((run_dir / "summary.json").read_text(encoding="utf-8"))
