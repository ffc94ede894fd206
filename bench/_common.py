"""Shared bits of the benchmarks: a scripted server in its own process, medians, and table printing."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self

ROOT = Path(__file__).resolve().parent.parent


def median_time(run: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


class ServerProcess:
    """The scripted server (keel.agent.harness.testing) run by hand in a separate process, so its CPU is not counted as ours."""

    def __init__(self, replies: list[dict], *extra: str) -> None:
        self.script = Path(tempfile.mkstemp(suffix=".json")[1])
        self.script.write_text(json.dumps(replies))
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "keel.agent.harness.testing.scripted_server",
                str(self.script),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.proc.stdout.readline()
        self.url = line.split()[-1].strip()
        if not self.url.startswith("http"):
            raise RuntimeError(f"scripted server did not start: {line!r}")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        os.unlink(self.script)


def row(label: str, value: str, ratio: str = "") -> None:
    print(f"  {label:<44} {value:>14}  {ratio}")
