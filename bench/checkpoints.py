"""Benchmark: what a checkpoint costs on a repository of a few thousand files, against `git status`.

Usage: python bench/checkpoints.py [--files N] [--runs N]

A turn's checkpoint is taken before its first edit or command, so its cost is paid once per turn.
Baseline: `git status --porcelain` in the user's repository (git scanning the same tree).
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from _common import median_time, row

from keel.agent.core.git.checkpoints import CheckpointStore


def make_repo(path: Path, files: int) -> None:
    for i in range(files):
        target = path / f"pkg{i % 40}" / f"sub{i % 7}" / f"mod{i}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(30)))
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run([*git, "init", "-q"], cwd=path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=path, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=path, check=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        make_repo(repo, options.files)
        store = CheckpointStore(repo, home=Path(tmp) / "home")

        status = median_time(
            lambda: subprocess.run(
                ["git", "status", "--porcelain"], cwd=repo, capture_output=True, check=True
            ),
            options.runs,
        )
        first = median_time(lambda: store.snapshot("first"), 1)
        unchanged = median_time(lambda: store.snapshot("unchanged"), options.runs)

        counter = iter(range(10**6))

        def change_then_snapshot() -> None:
            n = next(counter)
            for i in range(10):
                (repo / f"pkg{i}" / f"sub{i % 7}" / f"mod{i}.py").write_text(f"# change {n}\n")
            (repo / f"made_by_command_{n}.txt").write_text("x\n")
            store.snapshot("changed")

        changed = median_time(change_then_snapshot, options.runs)
        target = store.all()[-1]
        restore = median_time(lambda: store.restore(target), 1)

    print(f"checkpoints on a repository of {options.files} files (median of {options.runs} runs)")
    row("git status --porcelain (baseline)", f"{status * 1000:.1f} ms", "1.00x")
    for label, value in (
        ("first snapshot (hashes every file)", first),
        ("snapshot, nothing changed", unchanged),
        ("snapshot after 10 edits + 1 new file", changed),
        ("restore of the first snapshot", restore),
    ):
        row(label, f"{value * 1000:.1f} ms", f"{value / status:.2f}x")


if __name__ == "__main__":
    main()
