"""Batch results: one row per attempt in results.jsonl, and the summary (pass@1, pass@K) made from them."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from keel.agent.core.protocol import FinishStatus
from keel.prompts import plural

# verifier_failed: `keel bench`'s verifier gave no reward (test.sh missing, or it wrote none): no verdict
AttemptStatus = FinishStatus | Literal["setup_failed", "skipped", "timed_out", "verifier_failed"]
RERUN_ON_RESUME = ("interrupted", "error")  # attempts without a verdict: --resume runs them again


class ResultRow(BaseModel):
    """One attempt of one task, as a line of results.jsonl (`pass` in the file, `passed` in Python)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str
    attempt: int
    status: AttemptStatus
    passed: bool = Field(default=False, alias="pass")
    tokens: int = 0
    cost: float | None = None
    steps: int = 0
    duration: float = 0.0
    branch: str | None = None
    patch: str | None = None
    session_log: str | None = None
    reason: str = ""

    @property
    def key(self) -> tuple[str, int]:
        return (self.id, self.attempt)

    @property
    def judged(self) -> bool:
        """Whether the attempt has a verdict (pass or fail) that counts in the pass rate."""
        return self.status != "interrupted"

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)


class ResultsFile:
    """`DIR/results.jsonl`, appended one row at a time as attempts finish."""

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / "results.jsonl"

    def read(self) -> list[ResultRow]:
        """Every row written so far; a torn or foreign line is skipped."""
        if not self.path.is_file():
            return []
        rows = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(ResultRow.model_validate_json(line))
            except ValidationError:
                continue
        return rows

    def append(self, row: ResultRow) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as file:
            file.write(row.to_json() + "\n")


def latest(rows: list[ResultRow]) -> dict[tuple[str, int], ResultRow]:
    """The last row of each attempt (a resumed attempt appends a newer row)."""
    return {row.key: row for row in rows}


def finished_keys(rows: list[ResultRow]) -> set[tuple[str, int]]:
    return {key for key, row in latest(rows).items() if row.status not in RERUN_ON_RESUME}


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n attempts with c passes: 1 - C(n-c, k) / C(n, k) (k capped at n)."""
    if n == 0:
        return 0.0
    k = min(k, n)
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


class TaskSummary(BaseModel):
    id: str
    attempts: int
    judged: int
    passed: int
    pass_at_1: float
    pass_at_k: float
    tokens: int
    cost: float | None


class BatchSummary(BaseModel):
    k: int
    tasks: list[TaskSummary]
    attempts: int
    interrupted: int
    errors: int
    pass_at_1: float
    pass_at_k: float
    tokens: int
    cost: float | None
    duration: float


def _sum_cost(rows: list[ResultRow]) -> float | None:
    costs = [row.cost for row in rows if row.cost is not None]
    return sum(costs) if costs else None


def summarize(rows: list[ResultRow], k: int) -> BatchSummary:
    """Per task and overall: attempts with a verdict (not interrupted) count towards pass@1 and pass@k."""
    by_task: dict[str, list[ResultRow]] = {}
    for row in sorted(latest(rows).values(), key=lambda r: r.key):
        by_task.setdefault(row.id, []).append(row)
    summaries = []
    for task_id, task_rows in by_task.items():
        judged = [row for row in task_rows if row.status != "interrupted"]
        passes = sum(row.passed for row in judged)
        summaries.append(
            TaskSummary(
                id=task_id,
                attempts=len(task_rows),
                judged=len(judged),
                passed=passes,
                pass_at_1=pass_at_k(len(judged), passes, 1),
                pass_at_k=pass_at_k(len(judged), passes, k),
                tokens=sum(row.tokens for row in task_rows),
                cost=_sum_cost(task_rows),
            )
        )
    scored = [s for s in summaries if s.judged]
    everything = [row for task_rows in by_task.values() for row in task_rows]
    return BatchSummary(
        k=k,
        tasks=summaries,
        attempts=len(everything),
        interrupted=sum(row.status == "interrupted" for row in everything),
        errors=sum(row.status == "error" for row in everything),
        pass_at_1=sum(s.pass_at_1 for s in scored) / len(scored) if scored else 0.0,
        pass_at_k=sum(s.pass_at_k for s in scored) / len(scored) if scored else 0.0,
        tokens=sum(row.tokens for row in everything),
        cost=_sum_cost(everything),
        duration=sum(row.duration for row in everything),
    )


def _cost_text(cost: float | None) -> str:
    return "-" if cost is None else f"${cost:.4f}"


def format_summary(summary: BatchSummary) -> str:
    """The summary table printed at the end of a batch and saved as summary.txt."""
    k = summary.k
    width = max([len("task"), *(len(s.id) for s in summary.tasks)])
    at_k = f"  pass@{k:<2}" if k > 1 else ""  # with one attempt per task, pass@k is pass@1
    header = f"{'task':<{width}}  attempts  passed  pass@1{at_k} {'tokens':>10}  cost"
    lines = [header, "-" * len(header)]
    for s in summary.tasks:
        shown_k = f"  {s.pass_at_k:>7.2f}" if k > 1 else ""
        lines.append(
            f"{s.id:<{width}}  {s.attempts:>8}  {s.passed:>6}  {s.pass_at_1:>6.2f}{shown_k} "
            f"{s.tokens:>10,}  {_cost_text(s.cost)}"
        )
    lines.append("-" * len(header))
    total_k = f" · pass@{k} {summary.pass_at_k:.3f}" if k > 1 else ""
    lines.append(
        f"{plural(len(summary.tasks), 'task')}, {plural(summary.attempts, 'attempt')}"
        f" ({summary.interrupted} interrupted, {plural(summary.errors, 'error')})"
        f" · pass@1 {summary.pass_at_1:.3f}{total_k}"
        f" · {summary.tokens:,} tokens · cost {_cost_text(summary.cost)}"
        f" · {summary.duration:.1f} agent-seconds"
    )
    return "\n".join(lines)


def save_summary(out_dir: Path, summary: BaseModel, text: str) -> str:
    """summary.txt (the table) and summary.json (the model) in a run's folder; returns the table."""
    (out_dir / "summary.txt").write_text(text + "\n", encoding="utf-8")
    (out_dir / "summary.json").write_text(
        json.dumps(summary.model_dump(), indent=2) + "\n", encoding="utf-8"
    )
    return text


def write_summary(out_dir: Path, summary: BatchSummary) -> str:
    """Save summary.txt and summary.json; returns the table text."""
    return save_summary(out_dir, summary, format_summary(summary))
