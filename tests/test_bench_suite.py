"""The shipped suite (bench/suite): every task parses with keel's model of task.toml and builds locally,
its prompts are terse and its reference solutions span files; in the slow tier, `keel bench check` passes."""

from __future__ import annotations

import difflib
import statistics
import subprocess
from pathlib import Path

import pytest
from keel_cli import KEEL, keel_env

from keel.agent.harness.bench.dockerfile import parse_dockerfile
from keel.agent.harness.bench.tasks import BenchTask, find_tasks

SUITE = Path(__file__).resolve().parent.parent / "bench" / "suite"
CACHES = {"__pycache__", ".ruff_cache", ".pytest_cache"}  # left by tools run here, never shipped
CATEGORIES = {"bugfix", "feature", "refactor", "tests", "docs", "migration", "devops"}


def shipped() -> list[BenchTask]:
    return find_tasks([SUITE])


def changed_lines(task: BenchTask) -> tuple[int, int]:
    """Files and lines (added + removed) the reference solution changes: solution/files/ against the app."""
    files = lines = 0
    for new in sorted((task.solution_dir / "files").rglob("*")):
        if not new.is_file() or CACHES & set(new.parts):
            continue
        old = task.environment_dir / "app" / new.relative_to(task.solution_dir / "files")
        before = old.read_text().splitlines() if old.is_file() else []
        diff = difflib.unified_diff(before, new.read_text().splitlines(), lineterm="", n=0)
        count = sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))
        files, lines = files + (count > 0), lines + count
    return files, lines


def test_the_suite_has_24_tasks_over_every_category():
    tasks = shipped()
    assert len(tasks) >= 24
    assert {task.config.category for task in tasks} == CATEGORIES
    for task in tasks:
        recipe = parse_dockerfile(task.dockerfile.read_text(), task.config.environment.workdir)
        assert recipe.workdir == "/app", task.id
        assert (task.tests_dir / "test.sh").is_file() and (task.solution_dir / "solve.sh").is_file()
        assert any((task.environment_dir / "app").glob("LICEN[CS]E*")), (
            f"{task.id} ships no license"
        )
        assert task.config.metadata.get("source"), f"{task.id} names no source project"


def test_prompts_are_terse_and_solutions_span_files():
    tasks = shipped()
    words = [len(task.instruction.split()) for task in tasks]
    assert statistics.median(words) < 30, words
    stats = [changed_lines(task) for task in tasks]
    assert statistics.median(files for files, _ in stats) >= 3, stats
    assert statistics.median(lines for _, lines in stats) >= 40, stats


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_keel_bench_check_passes_on_the_shipped_suite(tmp_path):
    done = subprocess.run(
        [KEEL, "bench", "check", str(SUITE), "--env", "local", "-j", "2"],
        cwd=tmp_path,
        env=keel_env(tmp_path / "home"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=1700,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    count = len(shipped())
    assert f"{count}/{count} tasks valid" in done.stdout
