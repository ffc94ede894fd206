"""How the embedded model samples a reply: greedy by default so runs repeat; KEEL_LOCAL_TEMPERATURE and
KEEL_LOCAL_SEED set a process's choices (the benchmark's repeats differ by seed), and what keel asks for wins."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SAMPLED = """
import json
from keel.agent.core.model.local.worker import sampling_of
from keel.agent.core.model.local.worker_protocol import Generate, SamplingSpec

def described(spec):
    chosen = sampling_of(Generate(id=1, messages=[], sampling=spec))
    return {"temperature": chosen.temperature, "seed": chosen.seed, "max_tokens": chosen.max_tokens}

print(json.dumps([described(SamplingSpec()), described(SamplingSpec(temperature=0.7, seed=3, max_tokens=9))]))
"""


def sampled(**env: str) -> list[dict[str, object]]:
    """The sampling of a default request and of one that names its own, in a fresh process with `env`."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KEEL_LOCAL_")}
    done = subprocess.run(
        [sys.executable, "-c", SAMPLED],
        env={**environment, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_embedded_model_decodes_greedily_with_a_fixed_seed_by_default():
    default, asked = sampled()
    assert default == {"temperature": 0.0, "seed": None, "max_tokens": None}
    assert asked == {"temperature": 0.7, "seed": 3, "max_tokens": 9}


def test_the_environment_sets_the_temperature_and_seed_and_a_request_still_wins():
    default, asked = sampled(KEEL_LOCAL_TEMPERATURE="0.2", KEEL_LOCAL_SEED="11")
    assert default == {"temperature": 0.2, "seed": 11, "max_tokens": None}
    assert asked == {"temperature": 0.7, "seed": 3, "max_tokens": 9}


def test_a_calls_own_sampling_wins_over_the_settings_for_that_call_only():
    """A strategy's retry (CallSampling) reaches the worker over the profile's temperature; a call that asks
    nothing keeps the profile's, and what the call does not set stays as the settings have it."""
    from keel.agent.core.model.local.client import sampling_spec
    from keel.agent.core.model.sampling import CallSampling

    settings = {"temperature": 0.2, "max_tokens": 2048}
    plain = sampling_spec(settings, None, None, prose_only=False, record_tokens=False)
    retry = sampling_spec(settings, None, CallSampling(temperature=0.7, seed=2), True, False)
    seeded = sampling_spec(settings, 64, CallSampling(seed=5), False, False)
    assert (plain.temperature, plain.seed, plain.max_tokens) == (0.2, None, 2048)
    assert (retry.temperature, retry.seed, retry.prose_only) == (0.7, 2, True)
    assert (seeded.temperature, seeded.seed, seeded.max_tokens) == (0.2, 5, 64)
    assert settings == {"temperature": 0.2, "max_tokens": 2048}
