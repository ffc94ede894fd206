"""The embedded model's names alone: a front end shows them before pydantic or llama.cpp load."""

from __future__ import annotations

PROVIDER = "keel-local"
MODEL_NAME = "qwen2.5-coder-0.5b-instruct"
LITELLM_MODEL = f"{PROVIDER}/{MODEL_NAME}"


def is_embedded(model: str) -> bool:
    """True for the model name the embedded endpoint uses (a configured `keel-local/...` name included)."""
    return model.startswith(f"{PROVIDER}/")
