"""The RAM cache of evaluated conversations for a model several take turns on (`keel batch`, a served embedded
model): llama-cpp-python's, keeping each saved state without its copy of the logits buffer. That copy is
n_batch × vocabulary floats (about 300 MB with Qwen2.5's vocabulary) and the cache's capacity does not count it:
a bench's model worker holding a 1 GB cache grew past 13 GB."""

from __future__ import annotations

from typing import Any


def lean_state_cache(llama_cpp: Any, capacity_bytes: int) -> Any:
    """A LlamaRAMCache of `capacity_bytes` whose states keep one row of logits: a restored state is evaluated
    again before anything is sampled from it, and loading broadcasts the row over the rows it fills."""

    class LeanStateCache(llama_cpp.LlamaRAMCache):
        def __setitem__(self, key: Any, value: Any) -> None:
            value.scores = value.scores[-1:].copy()
            super().__setitem__(key, value)

    return LeanStateCache(capacity_bytes=capacity_bytes)
