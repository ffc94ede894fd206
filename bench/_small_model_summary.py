"""The small-model benchmark's summary: per harness (mode) the pass rate over every task and repeat, the
median tokens and the median wall time of an attempt; then keel's pass rate against the best peer's and
against one-shot's; before it, one row per task. Reported numbers use `--repeat 3`."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from _small_model_aider import EDIT_FORMATS
from _small_model_mini import MINI_MODES

if TYPE_CHECKING:
    from _small_model_keel import KeelRun
    from _small_model_one_shot import OneShotRun
    from _small_model_peers import PeerRun

PEER_MODES = (*EDIT_FORMATS, *MINI_MODES)


class Attempt(Protocol):
    """What the summary reads of any mode's run."""

    passed: bool
    tokens: int
    seconds: float


@dataclass
class HarnessStats:
    """One harness over all its attempts."""

    mode: str
    passed: int
    attempts: int
    median_tokens: float
    median_seconds: float

    @property
    def rate(self) -> float:
        """The share of attempts that passed (0 when none ran)."""
        return self.passed / self.attempts if self.attempts else 0.0


def harness_stats(mode: str, runs: Sequence[Attempt]) -> HarnessStats:
    """The pass count and medians of one harness's attempts."""
    return HarnessStats(
        mode=mode,
        passed=sum(run.passed for run in runs),
        attempts=len(runs),
        median_tokens=statistics.median([run.tokens for run in runs]) if runs else 0.0,
        median_seconds=statistics.median([run.seconds for run in runs]) if runs else 0.0,
    )


def ratio(numerator: HarnessStats, denominator: HarnessStats) -> str:
    """numerator's pass rate over denominator's, as "1.25"; "n/a" when the denominator solved nothing."""
    if not denominator.passed:
        return "n/a (it solved nothing)"
    return f"{numerator.rate / denominator.rate:.2f}"


def best_peer(stats: dict[str, HarnessStats]) -> HarnessStats | None:
    """The peer with the highest pass rate (the first in PEER_MODES on a tie); None when none ran."""
    peers = [stats[mode] for mode in PEER_MODES if mode in stats and stats[mode].attempts]
    return max(peers, key=lambda peer: peer.rate) if peers else None


def summary_lines(runs_by_mode: dict[str, Sequence[Attempt]]) -> list[str]:
    """The summary table, one row per harness that ran, then keel's ratios (goal >= 1.0)."""
    stats = {mode: harness_stats(mode, runs) for mode, runs in runs_by_mode.items() if runs}
    lines = [f"\n{'harness':<16} {'passed':>8} {'rate':>5} {'median tokens':>14} {'median s':>9}"]
    for got in stats.values():
        lines.append(
            f"{got.mode:<16} {f'{got.passed}/{got.attempts}':>8} {100 * got.rate:4.0f}% "
            f"{got.median_tokens:14.0f} {got.median_seconds:9.1f}"
        )
    keel = stats.get("keel")
    if keel is None:
        return lines
    if (peer := best_peer(stats)) is not None:
        lines.append(f"keel / best peer ({peer.mode}): {ratio(keel, peer)} (goal >= 1.0)")
    if (one := stats.get("one-shot")) is not None:
        lines.append(f"keel / one-shot: {ratio(keel, one)} (goal >= 1.0)")
    return lines


@dataclass
class TaskResults:
    """Every attempt at one task, in each mode."""

    one_shot: list[OneShotRun] = field(default_factory=list)
    keel: list[KeelRun] = field(default_factory=list)
    peers: dict[str, list[PeerRun]] = field(default_factory=dict)

    def by_mode(self) -> dict[str, Sequence[Any]]:
        """Every mode's attempts, by the mode's name."""
        return {"one-shot": self.one_shot, "keel": self.keel, **self.peers}

    def runs_of(self, mode: str) -> list[Any]:
        """The list one mode's attempts go to (a peer's made on first use)."""
        if mode == "one-shot":
            return self.one_shot
        return self.keel if mode == "keel" else self.peers.setdefault(mode, [])


def rate(passed: list[bool]) -> str:
    """How many attempts passed, as "2/3"; "-" when the mode did not run."""
    return f"{sum(passed)}/{len(passed)}" if passed else "-"


def mean(values: Sequence[float]) -> float:
    """The mean, 0 for no values (a mode that did not run)."""
    return sum(values) / len(values) if values else 0.0


def report(results: dict[str, TaskResults]) -> None:
    """One row per task, in the order given (each peer's rate at its end), then the pass rates and ratios,
    then the summary per harness."""
    peers = [mode for mode in PEER_MODES if any(got.peers.get(mode) for got in results.values())]
    print(
        f"\n{'task':<24} {'one-shot':>8} {'keel':>5}  {'keel status':<22} {'calls':>5} "
        f"{'tokens':>7} {'keel s':>7} {'1-shot s':>8}" + "".join(f" {mode:>14}" for mode in peers)
    )
    for name, got in results.items():
        statuses = Counter(run.status for run in got.keel)
        status = " ".join(f"{s}x{n}" if n > 1 else s for s, n in statuses.most_common())
        print(
            f"{name:<24} {rate([r.passed for r in got.one_shot]):>8} "
            f"{rate([r.passed for r in got.keel]):>5}  {status or '-':<22} "
            f"{mean([r.calls for r in got.keel]):5.1f} {mean([r.tokens for r in got.keel]):7.0f} "
            f"{mean([r.seconds for r in got.keel]):7.1f} {mean([r.seconds for r in got.one_shot]):8.1f}"
            + "".join(f" {rate([r.passed for r in got.peers.get(m, [])]):>14}" for m in peers)
        )
    one = [run.passed for got in results.values() for run in got.one_shot]
    keel = [run.passed for got in results.values() for run in got.keel]
    line = f"one-shot {rate(one)} passed ({100 * mean(one):.0f}%)" if one else "one-shot not run"
    line += f", keel {rate(keel)} passed ({100 * mean(keel):.0f}%)" if keel else ", keel not run"
    if one and keel:
        ratio = f"{mean(keel) / mean(one):.2f}" if any(one) else "n/a (one-shot solved nothing)"
        line += f"; keel/one-shot {ratio} (goal >= 1.0)"
    print(line)
    by_mode: dict[str, list[Any]] = {}
    for got in results.values():
        for mode, runs in got.by_mode().items():
            by_mode.setdefault(mode, []).extend(runs)
    print("\n".join(summary_lines(by_mode)))
