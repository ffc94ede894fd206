"""Whether a session's model takes images: the config's `images` when set, else litellm's model map says
(its `supports_vision`, what `litellm.supports_vision` reads, without importing litellm); the embedded models
never do."""

from __future__ import annotations

from keel.agent.core.model.local.names import is_embedded
from keel.agent.core.model.prices import model_info


def takes_images(model: str, configured: bool | None = None) -> bool:
    if configured is not None:
        return configured
    if is_embedded(model):
        return False
    info = model_info(model)
    return bool(info and info.get("supports_vision"))
