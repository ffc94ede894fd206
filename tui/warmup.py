"""Loads the core, litellm, the tools and Markdown on a thread after the first paint, so the UI never waits on imports."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keel.agent.protocol import ModelProgress
    from keel.agent.settings import SessionSettings

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
    import keel.agent.session
    from keel.agent.model.client import litellm_module
    from keel.tools import default_tools

    litellm_module()
    default_tools()
    import keel.tui.widgets.assistant_block  # noqa: F401

    freeze_loaded_objects("core")


def prepare_embedded(
    settings: SessionSettings, progress: Callable[[ModelProgress], None]
) -> str | None:
    """Start the embedded model's worker when the settings use it (it then assembles the file once, and loads
    it, telling `progress`); why it cannot run here, else None."""
    from keel.agent.errors import KeelError
    from keel.agent.model.local.spec import is_embedded

    if not is_embedded(settings.model):
        return None
    from keel.agent.model.local.endpoint import prepare_embedded_model

    try:
        prepare_embedded_model(settings.context_window, progress)
    except (KeelError, OSError) as exc:
        return str(exc)
    return None
