"""Process-wide setup for a keel process that runs agents: the garbage collector tuned for many live sessions.

Python's default collector runs a young-generation pass every 700 allocations and, every so often, a
pass over every container alive; with dozens of sessions in one process (their histories, events and
requests) that costs a tenth or more of the CPU (bench/parallel.py). What exists once startup is
done (modules, schemas, templates, the tokenizer's 200k-entry table) is frozen out of the passes,
and young passes run over a hundred times less often: at 1,000 rollouts (bench/rollouts_scale.py) a pass
every 10,000 allocations still took ~5% of the CPU, most of it promoting short-lived objects that a later
pass would have found dead; every 100,000, ~2%.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 100_000


def tune_gc() -> None:
    """Call once, after imports and before the agents start; later calls just refreeze."""
    from keel.agent.core.model.tokens import load_encoding

    load_encoding()  # loaded now, so its tables are frozen with the rest (every session needs it)
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(max(_young, YOUNG_THRESHOLD), max(middle, 20), max(old, 20))
