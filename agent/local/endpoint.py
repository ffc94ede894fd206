"""What keel runs on when no model is configured: the embedded model, made ready and registered with litellm."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from agent.local.assemble import MODEL_NAME, ensure_model_file
from agent.local.engine import DEFAULT_CONTEXT_TOKENS, LocalEngine, import_llama_cpp
from agent.local.provider import PROVIDER, register

LITELLM_MODEL = f"{PROVIDER}/{MODEL_NAME}"
_engines: dict[Path, LocalEngine] = {}


class EmbeddedEndpoint(BaseModel):
    """How a session reaches the embedded model: a litellm model name (no api_base: it runs in process)."""

    model: str = LITELLM_MODEL
    api_base: str | None = None
    context_window: int = DEFAULT_CONTEXT_TOKENS
    tool_protocol: Literal["native", "text"] = "native"
    compact_prompt: bool = True
    path: Path


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def prepare_embedded_model(context_window: int | None = None) -> EmbeddedEndpoint:
    """Check llama-cpp-python, assemble or verify the GGUF, register the provider; LocalModelUnavailable (exit 2)
    says how to install what is missing. The model itself loads on the first request."""
    import_llama_cpp()
    path = ensure_model_file(progress=_to_stderr)
    window = context_window or DEFAULT_CONTEXT_TOKENS
    engine = _engines.get(path)
    if engine is None or engine.context_tokens != window:
        engine = _engines[path] = LocalEngine(path, context_tokens=window)
    register(engine)
    return EmbeddedEndpoint(context_window=window, path=path)


def embedded_engine(endpoint: EmbeddedEndpoint) -> LocalEngine:
    """The engine serving an endpoint that prepare_embedded_model returned in this process."""
    return _engines[endpoint.path]


async def ensure_embedded_model(context_window: int | None = None) -> EmbeddedEndpoint:
    """prepare_embedded_model off the event loop (assembling the file takes seconds the first time)."""
    return await asyncio.to_thread(prepare_embedded_model, context_window)


def is_embedded(model: str) -> bool:
    """True for the model name the embedded endpoint uses (a configured `keel-local/...` name included)."""
    return model.startswith(f"{PROVIDER}/")
