"""The small-model benchmark's summary: per harness (mode) the pass rate over every task and repeat, the
median tokens and the median wall time of an attempt; then keel's pass rate against the best peer's and
against one-shot's. Reported numbers use `--repeat 3`."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

PEER_MODES = ("aider-whole", "aider-diff", "mini-swe-agent")


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
