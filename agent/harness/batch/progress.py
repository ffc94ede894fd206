"""The batch progress line on stderr: tasks and attempts done, pass rate, tokens — redrawn on a TTY, logged otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from typing import TextIO

from keel.agent.harness.batch.results import ResultRow

REASON_WIDTH = 120


def clip(text: str, width: int = REASON_WIDTH) -> str:
    """Text on one line, cut at a word boundary with an ellipsis when longer than `width`."""
    line = " ".join(text.split())
    if len(line) <= width:
        return line
    cut = line[: width - 1]
    if " " in cut and line[width - 1] != " ":
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{count / 1000:.0f}k"
    return f"{count:,}"


class Progress:
    """Counts finished attempts; on a terminal one line updated with \\r, else one line per attempt."""

    def __init__(
        self,
        attempts_per_task: dict[str, int],
        already: Iterable[ResultRow] = (),
        stream: TextIO | None = None,
        tty: bool | None = None,
        command: str = "batch",
    ) -> None:
        self.command = command
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.wanted = attempts_per_task
        self.total = sum(attempts_per_task.values())
        self.finished: dict[str, int] = {}
        self.done = self.passed = self.judged = self.tokens = 0
        self.started = time.monotonic()
        self._width = 0
        for row in already:
            self._count(row)

    @property
    def tasks_done(self) -> int:
        return sum(1 for task, count in self.finished.items() if count >= self.wanted.get(task, 0))

    def _count(self, row: ResultRow) -> None:
        self.finished[row.id] = self.finished.get(row.id, 0) + 1
        self.done += 1
        self.tokens += row.tokens
        if row.judged:
            self.judged += 1
            self.passed += self.counts_as_passed(row)

    def counts_as_passed(self, row: ResultRow) -> bool:
        """What the pass count counts (`keel bench check`: an attempt that did what it should)."""
        return row.passed

    def verdict(self, row: ResultRow) -> str:
        """The attempt's outcome in its line: pass, fail, or none (interrupted, an environment error)."""
        if not row.judged:
            return "no verdict"
        return "pass" if row.passed else "fail"

    def tally(self) -> str:
        rate = f"{100 * self.passed / self.judged:.0f}%" if self.judged else "-"
        return f"pass {self.passed}/{self.judged} ({rate})"

    def status_line(self) -> str:
        elapsed = time.monotonic() - self.started
        return (
            f"tasks {self.tasks_done}/{len(self.wanted)} · attempts {self.done}/{self.total}"
            f" · {self.tally()} · {_tokens(self.tokens)} tokens · {elapsed:.0f}s"
        )

    def add(self, row: ResultRow) -> None:
        """Count one finished attempt and show it."""
        self._count(row)
        # an error's reason in full: what went wrong is the one thing to read
        reason = " ".join(row.reason.split()) if row.status == "error" else clip(row.reason)
        if self.tty:
            if row.status == "error" or (not row.judged and row.status != "interrupted"):
                self.note(f"{row.id}#{row.attempt} {row.status}: {reason}")  # e.g. no verdict
            self._redraw(self.status_line())
        else:
            detail = f" ({reason})" if reason and not row.passed else ""
            print(
                f"keel {self.command}: {self.attempt_name(row)} {self.verdict(row)}{detail}"
                f" · {self.status_line()}",
                file=self.stream,
                flush=True,
            )

    def attempt_name(self, row: ResultRow) -> str:
        """How an attempt's line names it: `task#2 completed`."""
        return f"{row.id}#{row.attempt} {row.status}"

    def start(self) -> None:
        if self.tty:
            self._redraw(self.status_line())

    def note(self, text: str) -> None:
        """A message between progress updates (e.g. 'stopping…')."""
        if self.tty and self._width:
            self.stream.write("\n")
            self._width = 0
        print(f"keel {self.command}: {text}", file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0

    def _redraw(self, line: str) -> None:
        padding = " " * max(0, self._width - len(line))
        self.stream.write(f"\r{line}{padding}")
        self.stream.flush()
        self._width = len(line)
