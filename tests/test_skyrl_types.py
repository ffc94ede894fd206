"""keel's SkyRL generator against SkyRL's real types: skyrl-train==0.3.1 (its GPU stack left out: the types need
none of it) in a Python 3.12 venv of its own, .venv-skyrl/ (gitignored, kept while its stamp matches), driving
keel rollouts of a Harbor task (judged by its verifier) against the vLLM-shaped scripted server here; the output
validates as the real GeneratorOutput and holds what the server sent. A cold venv (keel and its dependencies) takes 2-3 minutes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from bench_support import make_task
from test_harbor_agent import python_312, stamp
from training_support import GrowingContext, assert_samples_sent
from venv_support import run_probe, stamped_venv

from keel.agent.harness.rollouts.api import RolloutTask

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-skyrl"
SKYRL = "skyrl-train==0.3.1"
PROBE = Path(__file__).with_name("skyrl_probe.py")


@pytest.fixture(scope="module")
def skyrl_venv() -> Path:
    """.venv-skyrl's python, made (or reused) with skyrl-train without dependencies and keel editable."""
    python = python_312()
    if python is None:
        pytest.skip("skyrl-train needs Python 3.12 and none was found (set KEEL_HARBOR_PYTHON)")
    wanted = {**stamp(python), "skyrl": SKYRL}
    return stamped_venv(VENV, python, wanted, [["--no-deps", SKYRL], ["-e", str(ROOT)]], SKYRL)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="Harbor tasks run in bubblewrap here")
def test_a_step_wise_batch_is_skyrls_generator_output_with_the_servers_tokens(
    skyrl_venv, scripted_server, tmp_path
):
    model = GrowingContext(reads=1)
    server = scripted_server(model)
    task = RolloutTask(id="fix", harbor=make_task(tmp_path / "suite", "fix"))
    asked = {"url": server.url, "task": task.model_dump(mode="json"), "out": str(tmp_path / "out")}
    out = run_probe(skyrl_venv, PROBE, asked, tmp_path / "home")
    assert len(model.sent) == len(out["response_ids"]) == 6  # two rollouts: edit, read, answer
    assert_samples_sent(out, model)
    assert out["trajectory_ids"] == [[f"fix_{r}", s] for r in (0, 1) for s in (0, 1, 2)]
    assert out["is_last_step"] == [False, False, True] * 2
    assert out["rewards"][0] > 0.5 > out["rewards"][3]  # the verifier's verdicts
