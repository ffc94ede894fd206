"""`keel bench check`: a task is valid when its oracle (solution/solve.sh) passes and nop (no change) fails."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from keel.agent.bench.results import BenchRow
from keel.agent.bench.tasks import BenchTask


class CheckVerdict(BaseModel):
    """One task's check: the two rewards, and what is wrong when it is not valid."""

    id: str
    oracle: float | None = None
    nop: float | None = None
    problems: list[str] = []

    @property
    def valid(self) -> bool:
        return not self.problems


def _verdict(task: BenchTask, oracle: BenchRow | None, nop: BenchRow | None) -> CheckVerdict:
    verdict = CheckVerdict(
        id=task.id,
        oracle=oracle.reward if oracle else None,
        nop=nop.reward if nop else None,
    )
    for name, row in (("oracle", oracle), ("nop", nop)):
        if row is None:
            verdict.problems.append(f"{name} did not run")
        elif row.status in ("skipped", "setup_failed", "interrupted", "error"):
            verdict.problems.append(f"{name} {row.status}: {row.reason}")
        elif row.reward is None:
            verdict.problems.append(f"{name}: {row.reason or 'no reward'}")
    if oracle and oracle.reward is not None and not oracle.passed:
        verdict.problems.append(
            f"the oracle's reward is {oracle.reward:g}, not 1: {oracle.reason}".rstrip(": ")
        )
    if nop and nop.reward is not None and nop.passed:
        verdict.problems.append("nop passes: the tests pass on the untouched workspace")
    return verdict


def check_verdicts(tasks: Sequence[BenchTask], rows: Sequence[BenchRow]) -> list[CheckVerdict]:
    """A verdict per task, from the oracle's and nop's rows."""
    by_agent = {(row.id, row.agent): row for row in rows}
    return [
        _verdict(task, by_agent.get((task.id, "oracle")), by_agent.get((task.id, "nop")))
        for task in tasks
    ]


def _reward(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def format_check(verdicts: Sequence[CheckVerdict]) -> str:
    """A line per task (valid, or what is wrong), then the count."""
    width = max([len("task"), *(len(v.id) for v in verdicts)])
    lines = [f"{'task':<{width}}  oracle  nop  verdict"]
    for v in verdicts:
        said = "valid" if v.valid else "INVALID: " + "; ".join(v.problems)
        lines.append(f"{v.id:<{width}}  {_reward(v.oracle):>6}  {_reward(v.nop):>3}  {said}")
    valid = sum(v.valid for v in verdicts)
    lines.append(f"{valid}/{len(verdicts)} tasks valid")
    return "\n".join(lines)
