"""Makes the embedded model ready: llama.cpp importable, the GGUF assembled and verified, the provider registered."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from agent.local.assemble import Progress, ensure_model_file
from agent.local.engine import LocalEngine, import_llama_cpp
from agent.local.provider import register
from agent.local.spec import EmbeddedEndpoint, describe_embedded

_engines: dict[Path, LocalEngine] = {}
_registered: list[LocalEngine] = []  # the engine litellm's provider serves now (at most one)


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def prepare_embedded_model(
    context_window: int | None = None, progress: Progress = _to_stderr
) -> EmbeddedEndpoint:
    """Check llama-cpp-python, assemble or verify the GGUF, register the provider; LocalModelUnavailable (exit 2)
    says how to install what is missing. The model itself loads on the first request. Made ready once
    a process: asked again (the TUI's warm-up, then each session it starts), it returns at once."""
    endpoint = describe_embedded(context_window)
    engine = _engines.get(endpoint.path)
    if engine in _registered and engine.context_tokens == endpoint.context_window:
        return endpoint
    import_llama_cpp()
    path = ensure_model_file(progress=progress, target=endpoint.path)
    if engine is None or engine.context_tokens != endpoint.context_window:
        engine = _engines[path] = LocalEngine(path, context_tokens=endpoint.context_window)
    register(engine)
    _registered[:] = [engine]
    return endpoint


def embedded_engine(endpoint: EmbeddedEndpoint) -> LocalEngine:
    """The engine serving an endpoint that prepare_embedded_model returned in this process."""
    return _engines[endpoint.path]


async def ensure_embedded_model(context_window: int | None = None) -> EmbeddedEndpoint:
    """prepare_embedded_model off the event loop (assembling the file takes seconds the first time)."""
    return await asyncio.to_thread(prepare_embedded_model, context_window)
