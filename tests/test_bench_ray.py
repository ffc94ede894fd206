"""`keel bench --backend ray`: the trials run as Ray tasks on a local Ray, with the same rows as locally."""

from __future__ import annotations

import importlib.util
import shutil

import pytest
from bench_support import make_task
from keel_cli import run_keel

from keel.agent.harness.bench.results import read_rows

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed"),
    pytest.mark.skipif(
        shutil.which("bwrap") is None, reason="the local environment needs bubblewrap"
    ),
]


def test_oracle_and_nop_trials_on_a_local_ray(tmp_path):
    suite = tmp_path / "suite"
    for name in ("one", "two"):
        make_task(suite, name)
    home = tmp_path / "home"
    for agent, reward in (("oracle", 1.0), ("nop", 0.0)):
        out = tmp_path / agent
        result = run_keel(
            "bench", str(suite), "--agent", agent, "--backend", "ray", "-j", "2", "-k", "2",
            "--out", str(out), "--env", "local", cwd=tmp_path, home=home, timeout=280,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        rows = read_rows(out / "results.jsonl")
        assert sorted(row.key for row in rows) == [(t, n) for t in ("one", "two") for n in (1, 2)]
        assert {(row.status, row.reward, row.agent) for row in rows} == {
            ("completed", reward, agent)
        }
        assert (out / "report.html").is_file()
