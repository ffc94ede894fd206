"""keel's TRL rollout_func in a real GRPOTrainer step: trl==1.16.0 with torch's CPU build (the wheel on this
machine's disk, never a CUDA download) in a venv of its own, .venv-trl/ (gitignored, kept while its stamp
matches), a tiny model made in memory, keel rollouts of a Harbor task (judged by its verifier) against the
vLLM-shaped scripted server here. The trainer takes the batch as it is, its reward is keel's, the step moves the
weights, and every sampled id and logprob is what the server sent. A cold venv takes a few minutes (torch is
~700 MB unpacked)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from bench_support import make_task
from test_harbor_agent import stamp
from training_support import GrowingContext
from venv_support import run_probe, stamped_venv

from keel.agent.harness.rollouts.api import RolloutTask

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-trl"
# transformers pinned: trl takes the newest, and 5.25 wants huggingface-hub>=2.4, which litellm's tokenizers refuse
TORCH, TRL, TRANSFORMERS = "torch==2.13.0", "trl==1.16.0", "transformers==5.24.0"
PROBE = Path(__file__).with_name("trl_probe.py")
VOCAB = 150_000  # the scripted model's ids are below this


@pytest.fixture(scope="module")
def trl_venv() -> Path:
    """.venv-trl's python, made (or reused) with torch's CPU build from pip's find-links, trl and keel."""
    python = sys._base_executable
    wanted = {**stamp(python), "trl": TRL, "torch": TORCH, "transformers": TRANSFORMERS}
    installs = [
        # --no-index: only a wheel on this machine's disk (find-links); PyPI's is a CUDA build of several GB
        ["--no-index", "--no-deps", TORCH],
        [TORCH, TRL, TRANSFORMERS],
        ["-e", str(ROOT)],
    ]
    what = f"{TORCH} (the CPU build in pip's find-links), {TRL} and {TRANSFORMERS}"
    return stamped_venv(VENV, python, wanted, installs, what)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="Harbor tasks run in bubblewrap here")
def test_a_grpo_step_trains_on_keel_rollouts_with_the_servers_tokens(
    trl_venv, scripted_server, tmp_path
):
    model = GrowingContext(reads=1)
    server = scripted_server(model)
    task = RolloutTask(id="fix", harbor=make_task(tmp_path / "suite", "fix"))
    asked = {
        "url": server.url, "task": task.model_dump(mode="json"), "out": str(tmp_path / "out"),
        "vocab": VOCAB,
    }  # fmt: skip
    out = run_probe(trl_venv, PROBE, asked, tmp_path / "home", TRL_EXPERIMENTAL_SILENCE="1")
    (batch,) = out["returned"]  # one step: 2 prompts, as the trainer's sampler repeats them
    assert batch["prompts"] == ["fix", "fix"] and len(model.sent) == 6  # edit, read, answer twice
    for number in range(2):
        calls = model.sent[3 * number : 3 * number + 3]
        completion, mask = batch["completion_ids"][number], batch["env_mask"][number]
        assert batch["prompt_ids"][number] == calls[0].prompt_token_ids
        sampled = [n for n, bit in enumerate(mask) if bit]
        assert [completion[n] for n in sampled] == [
            t for c in calls for t in c.completion_token_ids
        ]
        assert [batch["logprobs"][number][n] for n in sampled] == [
            p for c in calls for p in c.logprobs
        ]
    (step, _) = out["log"]
    totals = batch["keel_total"]
    assert step["rewards/keel_reward/mean"] == pytest.approx(sum(totals) / 2, abs=1e-5)
    assert batch["keel_outcome"] == [1.0, 0.0]  # the verifier's verdicts
    assert (
        totals[0] != totals[1] and step["loss"] == step["loss"]
    )  # a reward gap to learn from; no NaN
    assert out["moved"]  # one GRPO update changed the weights
