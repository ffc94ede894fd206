"""bench/startup: `keel --version` and `keel run` readiness against bare python, as ratios (goal: --version ≤ 0.15 s)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ServerProcess, median_time, row

KEEL = str(Path(sys.executable).parent / "keel")
REPEAT = 15


def quiet(*cmd: str, **kwargs: object) -> None:
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, **kwargs)


def run_readiness(url: str, home: str, workspace: str) -> tuple[float, float]:
    """Seconds until keel's first model request arrives, and until the process exits."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [
            KEEL,
            "run",
            "--model",
            "openai/any",
            "--api-base",
            url,
            "--output-format",
            "stream-json",
            "hi",
        ],
        cwd=workspace,
        env={**os.environ, "KEEL_HOME": home},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    first_request = None
    for line in proc.stdout:
        if '"type":"assistant.message"' in line and first_request is None:
            first_request = time.perf_counter() - start
    proc.wait()
    return first_request or float("nan"), time.perf_counter() - start


def main() -> None:
    bare = median_time(lambda: quiet(sys.executable, "-c", "pass"), REPEAT)
    version = median_time(lambda: quiet(KEEL, "--version"), REPEAT)
    print(f"startup (median of {REPEAT})")
    row("bare python -c pass", f"{bare * 1000:.0f} ms", "1.00x")
    row(
        "keel --version",
        f"{version * 1000:.0f} ms",
        f"{version / bare:.2f}x bare   goal ≤ 150 ms: " + ("met" if version <= 0.15 else "MISSED"),
    )
    home, workspace = tempfile.mkdtemp(), tempfile.mkdtemp()
    with ServerProcess([{"text": "hello"}] * 5) as server:
        runs = [run_readiness(server.url, home, workspace) for _ in range(3)]
    first = sorted(r[0] for r in runs)[1]
    total = sorted(r[1] for r in runs)[1]
    row("keel run: first answer received", f"{first * 1000:.0f} ms", f"{first / bare:.1f}x bare")
    row("keel run: process exit", f"{total * 1000:.0f} ms", f"{total / bare:.1f}x bare")


if __name__ == "__main__":
    main()
