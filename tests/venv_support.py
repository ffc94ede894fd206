"""Venvs of their own for the tests that check keel against another project's real code (Harbor, SkyRL, TRL),
made once and kept while their stamp matches (the test skipped with what failed when one cannot be made), and
the probes those tests run in them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest


def stamped_venv(
    venv: Path, python: str, wanted: dict[str, str], installs: list[list[str]], what: str
) -> Path:
    """`venv`'s python: reused while its stamp is `wanted`, else made with `python` and each of `installs` (pip
    install's arguments) in turn; `what` says what the installs are, for the skip's reason."""
    stamp_file = venv / "keel-stamp.json"
    if stamp_file.is_file() and json.loads(stamp_file.read_text()) == wanted:
        return venv / "bin" / "python"
    if venv.exists() and not stamp_file.is_file():
        pytest.skip(f"{venv} was not made by this test (it has no stamp): remove it to let the test make it")  # fmt: skip
    shutil.rmtree(venv, ignore_errors=True)
    started = time.monotonic()
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    for step in [[python, "-m", "venv", str(venv)], *([*pip, *args] for args in installs)]:
        done = subprocess.run(step, capture_output=True, text=True, check=False, timeout=1500)
        if done.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            errors = [line for line in done.stderr.splitlines() if not line.startswith("WARNING")]
            pytest.skip(f"could not install {what} with {python}: {' '.join(errors)[-800:]}")
    stamp_file.write_text(json.dumps(wanted))
    print(f"made {venv} in {time.monotonic() - started:.0f} s")
    return venv / "bin" / "python"


def run_probe(python: Path, probe: Path, asked: dict[str, object], home: Path, **env: str) -> Any:
    """`probe` run by a venv's python with `asked` as JSON, in keel's home `home`, without the caller's keel or
    OpenAI settings: the JSON of its last line of output (the test fails with its stderr when it fails)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KEEL_", "OPENAI_"))}
    done = subprocess.run(
        [str(python), str(probe), json.dumps(asked)],
        capture_output=True, text=True, check=False, timeout=900,
        env={**clean, "KEEL_HOME": str(home), **env},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
