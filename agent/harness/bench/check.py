"""`keel bench check`: a task is valid when its oracle (solution/solve.sh) passes and nop (no change) fails."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from keel.agent.harness.batch.progress import Progress
from keel.agent.harness.batch.results import ResultRow
from keel.agent.harness.bench.results import BenchRow
from keel.agent.harness.bench.tasks import BenchTask


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


def _should_pass(row: ResultRow) -> bool:
    return isinstance(row, BenchRow) and row.agent == "oracle"


def as_expected(row: ResultRow) -> bool:
    """The oracle passed, or nop got a verdict and failed: what a valid task's attempts do."""
    if not isinstance(row, BenchRow) or not row.judged or row.reward is None:
        return False
    return row.passed == _should_pass(row)


class CheckProgress(Progress):
    """`keel bench check`'s progress: each attempt against what it should do (the oracle pass, nop fail)."""

    def counts_as_passed(self, row: ResultRow) -> bool:
        return as_expected(row)

    def attempt_name(self, row: ResultRow) -> str:
        return f"{row.id} {row.agent}" if isinstance(row, BenchRow) else row.id

    def verdict(self, row: ResultRow) -> str:
        should = "pass" if _should_pass(row) else "fail"
        if as_expected(row):
            return f"{'passed' if row.passed else 'failed'}, as it should"
        if not row.judged or getattr(row, "reward", None) is None:
            return f"no verdict ({row.status}), where it should {should}"
        return f"{'PASSED' if row.passed else 'FAILED'}, where it should {should}"

    def tally(self) -> str:
        return f"as expected {self.passed}/{self.done}"
