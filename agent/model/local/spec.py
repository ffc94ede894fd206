"""What the embedded model is and where it lives, in constants: cheap enough to import before the UI paints.

Making it ready (llama.cpp, the assembled file, the litellm provider) is keel.agent.model.local.endpoint's work;
a front end can describe the model first and prepare it once it is on screen.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from keel.agent.model.local.names import (  # noqa: F401 - pydantic-free home of names imported from here
    LITELLM_MODEL,
    MODEL_NAME,
    PROVIDER,
    is_embedded,
)

MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
DEFAULT_CONTEXT_TOKENS = 16_384


class EmbeddedEndpoint(BaseModel):
    """How a session reaches the embedded model: a litellm model name (no api_base: it runs in process)."""

    model: str = LITELLM_MODEL
    api_base: str | None = None
    context_window: int = DEFAULT_CONTEXT_TOKENS
    tool_protocol: Literal["native", "text"] = "native"
    compact_prompt: bool = True
    path: Path


def models_dir() -> Path:
    """$KEEL_HOME/models, else the platform's user cache dir for keel."""
    if home := os.environ.get("KEEL_HOME"):
        return Path(home) / "models"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("keel", appauthor=False)) / "models"


def model_path() -> Path:
    return models_dir() / MODEL_FILE


def describe_embedded(context_window: int | None = None) -> EmbeddedEndpoint:
    """The endpoint as prepare_embedded_model will return it, without checking or loading anything."""
    return EmbeddedEndpoint(
        context_window=context_window or DEFAULT_CONTEXT_TOKENS, path=model_path()
    )
