"""`keel bench` on the embedded model with nothing configured: a small Harbor task runs to a verdict and a report."""

from __future__ import annotations

import shutil

import pytest
from bench_support import make_task
from keel_cli import run_keel
from local_model_support import linked_home, needs_llama, needs_pieces

from keel.agent.core.model.local.catalog import default_model
from keel.agent.harness.bench.results import BenchSummary, read_rows

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    needs_llama,
    needs_pieces,
    pytest.mark.skipif(
        shutil.which("bwrap") is None, reason="the local environment needs bubblewrap"
    ),
]


def test_the_embedded_model_runs_a_task_to_a_verdict_and_a_report(assembled_default, tmp_path):
    task = make_task(tmp_path / "suite", "calc", instruction="add() in calc.py subtracts. fix it")
    home = linked_home(assembled_default, tmp_path / "home")
    out = tmp_path / "out"
    result = run_keel(
        "bench", str(task), "--max-steps", "4", "--agent-timeout", "600", "--out", str(out), "--env", "local",
        cwd=tmp_path, home=home, timeout=840,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (row,) = read_rows(out / "results.jsonl")
    assert row.model == default_model().model
    assert row.status in ("completed", "max_steps", "budget_exhausted"), row.reason
    assert row.reward in (0.0, 1.0) and row.tokens > 0 and row.prompt_tokens > 0
    summary = BenchSummary.model_validate_json((out / "summary.json").read_text())
    assert summary.tasks[0].judged == 1 and summary.median_tokens == row.tokens
    assert (out / "pareto.png").read_bytes()[:4] == b"\x89PNG"
    assert "calc" in (out / "report.html").read_text()
