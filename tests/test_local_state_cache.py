"""(slow) Conversations taking turns on one embedded model keep their evaluated states in RAM without the
logits buffer llama-cpp-python copies into each (n_batch × vocabulary floats, ~300 MB with Qwen2.5's
vocabulary, not counted against the cache's capacity: a bench's model worker grew past 13 GB)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from local_model_support import needs_llama
from tiny_gguf import REPLY

TAKING_TURNS = """
import asyncio, json, sys
from pathlib import Path
from keel.agent.core.model.local.engine import Generation, LocalEngine

async def reply(engine, text):
    pieces = [p async for p in engine.stream([{"role": "user", "content": text}], None, Generation())]
    return "".join(pieces)

async def main():
    engine = LocalEngine(path=Path(sys.argv[1]), context_tokens=2048)
    first, second = "Say hello. " * 40, "Tell me something else entirely. " * 40
    replies = [await reply(engine, text) for text in (first, second, first, second, first)]
    states = list(engine.llama.cache.cache_state.values())
    print(json.dumps({
        "replies": replies,
        "states": len(states),
        "rows": [int(state.scores.shape[0]) for state in states],
        "vocabulary": engine.llama.n_vocab(),
        "batch": engine.llama.n_batch,
    }))

asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
@needs_llama
def test_states_kept_for_conversations_taking_turns_hold_one_row_of_logits(tiny_model):
    done = subprocess.run(
        [sys.executable, "-c", TAKING_TURNS, str(tiny_model)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["replies"] == [REPLY] * 5  # restored states still answer as evaluated ones
    assert found["states"] >= 2 and found["batch"] > 1
    assert found["rows"] == [1] * found["states"]  # not n_batch rows of a vocabulary's floats each
