"""Where the chosen embedded model lives and how a session reaches it: cheap enough to import before the UI paints.

Making it ready (llama.cpp, the assembled file) is keel.agent.core.model.local.endpoint's work; a front end can
describe the model first and prepare it once it is on screen.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from keel.agent.core.model.local.catalog import EmbeddedModel, default_model, embedded_model
from keel.agent.core.model.local.names import file_of

DEFAULT_CONTEXT_TOKENS = 16_384  # the embedded models' window, and a GGUF file's at most


class EmbeddedEndpoint(BaseModel):
    """How a session reaches an embedded model: its `keel-local/...` name (no api_base: keel runs it)."""

    model: str
    api_base: str | None = None
    context_window: int = DEFAULT_CONTEXT_TOKENS
    tool_protocol: Literal["native", "text"] = "native"
    path: Path

    @property
    def embedded(self) -> EmbeddedModel:
        """The catalog's entry for this endpoint's model (its pieces, size and checksum)."""
        return embedded_model(self.model)


def models_dir() -> Path:
    """$KEEL_HOME/models, else the platform's user cache dir for keel."""
    if home := os.environ.get("KEEL_HOME"):
        return Path(home) / "models"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("keel", appauthor=False)) / "models"


def model_path(model: EmbeddedModel | None = None) -> Path:
    """Where the model's (the default's) assembled GGUF lives."""
    return models_dir() / (model or default_model()).file


def describe_embedded(
    context_window: int | None = None, model: str | None = None
) -> EmbeddedEndpoint:
    """The endpoint of the embedded model `model` names (the default for None), as prepare_embedded_model will
    return it, without loading anything; ConfigError for an unknown `keel-local/NAME`, or for a
    `keel-local/<path>` that is not a GGUF file with a chat template (its header is read, nothing more)."""
    if model and file_of(model) is not None:
        from keel.agent.core.model.local.model_file import file_model_name, model_file

        info = model_file(model)
        made_for = info.context_length or DEFAULT_CONTEXT_TOKENS
        return EmbeddedEndpoint(
            model=file_model_name(info.path),
            context_window=context_window or min(made_for, DEFAULT_CONTEXT_TOKENS),
            path=info.path,
        )
    chosen = embedded_model(model)
    return EmbeddedEndpoint(
        model=chosen.model,
        context_window=context_window or chosen.context_window,
        path=model_path(chosen),
    )
