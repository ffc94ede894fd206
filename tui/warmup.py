"""Loads the core, litellm, the tools and Markdown on a thread after the first paint, so the UI never waits on imports."""

from __future__ import annotations

import gc

_frozen_stages: set[str] = set()


def freeze_loaded_objects(stage: str) -> None:
    """Move everything loaded so far out of the garbage collector's way (once a stage and process).

    Modules, classes and functions live as long as the process, yet every full collection walks
    them: with litellm loaded that is about 300,000 objects, a stall of the UI of some 0.2 s.
    """
    if stage not in _frozen_stages:
        _frozen_stages.add(stage)
        gc.freeze()


def warm_up_core() -> None:
    from keel.agent.core.api import warm_up

    warm_up()
    import keel.tui.widgets.assistant_block  # noqa: F401

    freeze_loaded_objects("core")
