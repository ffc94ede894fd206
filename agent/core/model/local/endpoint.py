"""Makes the embedded model ready: its worker process started, which imports llama.cpp and finds the GGUF.

Assembling the file (the first time) and loading it go on in the worker after that; their progress reaches
the listener given here and, as `model.progress` events, the first request that waits for them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from keel.agent.core.model.local.spec import EmbeddedEndpoint, describe_embedded
from keel.agent.core.model.local.worker_client import ModelWorker, progress_event
from keel.agent.core.protocol import ModelProgress

_workers: dict[tuple[str, Path, int], ModelWorker] = {}


def embedded_worker(endpoint: EmbeddedEndpoint) -> ModelWorker:
    """The one worker of this process for the endpoint's model, file and context size (not started yet,
    maybe)."""
    key = (endpoint.model, endpoint.path, endpoint.context_window)
    worker = _workers.get(key)
    if worker is None:
        worker = _workers[key] = ModelWorker(*key)
    return worker


def prepare_embedded_model(
    context_window: int | None = None,
    progress: Callable[[ModelProgress], None] | None = None,
    model: str | None = None,
) -> EmbeddedEndpoint:
    """Start the worker of the embedded model `model` names (the default for None), once a process; asked
    again, it returns at once. LocalModelUnavailable (exit 2) says how to install what is missing, ConfigError
    names the known models for an unknown one; `progress` hears each stage."""
    endpoint = describe_embedded(context_window, model)
    worker = embedded_worker(endpoint)
    if progress is not None:
        worker.listen(lambda message: progress(progress_event(message)))
    worker.start()
    return endpoint


def stop_workers() -> None:
    """End every model worker of this process (the UI closes; a test ends)."""
    for worker in _workers.values():
        worker.stop()


async def ensure_embedded_model(
    context_window: int | None = None, model: str | None = None
) -> EmbeddedEndpoint:
    """prepare_embedded_model off the event loop (starting the worker takes a moment)."""
    return await asyncio.to_thread(prepare_embedded_model, context_window, None, model)
