"""The embedded models' names alone: a front end shows them before pydantic or llama.cpp load.

Which models there are, and what each `keel-local/...` name means, is keel.agent.model.local.catalog's.
"""

from __future__ import annotations

PROVIDER = "keel-local"
MODEL_NAME = "qwen2.5-coder-0.5b-instruct"  # the default embedded model
LITELLM_MODEL = f"{PROVIDER}/{MODEL_NAME}"


def is_embedded(model: str) -> bool:
    """True for a `keel-local/...` name: one of the embedded models (or, if unknown, a ConfigError later)."""
    return model.startswith(f"{PROVIDER}/")
