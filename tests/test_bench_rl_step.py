"""bench/rl_step.py on a machine without what a GRPO step needs (torch, trl, a GPU): it says which, exits 0."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

from keel_cli import keel_env

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "rl_step.py"


def test_without_torch_or_a_gpu_it_says_why_and_exits_0(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        env=keel_env(tmp_path / "home"),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.fullmatch(
        r"rl_step: skipped, (?:(\w+) is not installed \(pip install .*\)|(no GPU): .*)\.\n",
        done.stdout,
    )
    assert found, done.stdout
    package, gpu = found.groups()
    if package:  # what it names is missing indeed
        assert importlib.util.find_spec(package) is None
    else:
        import torch  # it found torch, and torch finds no GPU

        assert gpu and not torch.cuda.is_available()


def test_its_help_names_its_options():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60, check=True
    )  # fmt: skip
    for option in ("--k", "--tasks", "--max-steps", "--lr"):
        assert option in done.stdout
