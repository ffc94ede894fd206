"""`--backend ray`: one Ray task per attempt on a local Ray or a cluster; rows stream back as attempts finish."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from keel.agent.harness.batch.results import ResultRow
from keel.agent.harness.batch.runner import AttemptSpec, run_attempt

OBJECT_STORE_BYTES = (
    200 * 1024 * 1024
)  # attempts pass small JSON strings; the default would take 30% of RAM
STOP_POLL_SECONDS = 0.5
DRAIN_SECONDS = 120.0
_FORWARDED_ENV = ("KEEL_", "LITELLM_", "TIKTOKEN_CACHE_DIR", "XDG_CONFIG_HOME")
Spec = TypeVar("Spec")
Row = TypeVar("Row", bound=ResultRow)


class StopFlag:
    """A Ray actor the driver sets on Ctrl-C; attempts poll it and stop the way local ones do."""

    def __init__(self) -> None:
        self.stopped = False

    def set(self) -> None:
        self.stopped = True

    def is_set(self) -> bool:
        return self.stopped


async def until_stopped(
    run: Callable[[Spec, asyncio.Event], Awaitable[Row]], spec: Spec, flag: Any
) -> Row:
    """Run one attempt in a Ray worker, stopped the way local ones are when the driver sets `flag`."""
    stop = asyncio.Event()

    async def watch() -> None:
        while not await flag.is_set.remote():
            await asyncio.sleep(STOP_POLL_SECONDS)
        stop.set()

    watcher = asyncio.create_task(watch())
    try:
        return await run(spec, stop)
    finally:
        watcher.cancel()


def attempt_in_worker(spec_json: str, flag: Any) -> str:
    """The body of each Ray task: the same attempt code as the local backend, in the worker's own loop."""
    spec = AttemptSpec.model_validate_json(spec_json)
    return asyncio.run(until_stopped(run_attempt, spec, flag)).to_json()


def _forwarded_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key.startswith(_FORWARDED_ENV)}


def _start_ray(ray: Any, address: str | None, jobs: int) -> bool:
    """Join `address` (or $RAY_ADDRESS), else start a local Ray; True when this call started or joined it."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS")
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address:
        ray.init(address=address, runtime_env={"env_vars": _forwarded_env()}, **quiet)
    else:  # local workers inherit this process's environment
        ray.init(
            address="local",
            num_cpus=max(1, jobs),
            include_dashboard=False,
            object_store_memory=OBJECT_STORE_BYTES,
            **quiet,
        )
    return True


def _row_of(ray: Any, ref: Any, spec: Any, row_type: type[Row]) -> Row:
    try:
        return row_type.model_validate_json(ray.get(ref))
    except ray.exceptions.TaskCancelledError:
        return row_type(
            id=spec.task.id, attempt=spec.attempt, status="interrupted", reason="cancelled"
        )
    except ray.exceptions.RayError as exc:
        reason = f"ray: {type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
        return row_type(id=spec.task.id, attempt=spec.attempt, status="error", reason=reason)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def run_ray(
    specs: Iterable[Any],
    jobs: int,
    on_row: Callable[[Any], None],
    address: str | None = None,
    note: Callable[[str], None] = lambda text: None,
    worker: Callable[[str, Any], str] = attempt_in_worker,
    row_type: type[ResultRow] = ResultRow,
) -> bool:
    """Run the attempts as Ray tasks, at most `jobs` in flight; returns True if stopped by Ctrl-C.

    `worker` runs one attempt from its spec's JSON (batch attempts by default, bench trials too),
    and its rows are read back as `row_type`."""
    import ray

    started = _start_ray(ray, address, jobs)
    previous_sigterm = signal.signal(
        signal.SIGTERM, _raise_interrupt
    )  # after ray.init, which sets its own
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(worker)
        # Any: Ray types an actor handle's methods as plain methods, without their .remote
        flag: Any = ray.remote(num_cpus=0)(StopFlag).remote()
        in_flight: dict[Any, Any] = {}
        queue = iter(specs)

        def collect(timeout: float) -> None:
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=timeout)
            for ref in done:
                on_row(_row_of(ray, ref, in_flight.pop(ref), row_type))

        try:
            while True:
                while len(in_flight) < max(1, jobs) and (spec := next(queue, None)) is not None:
                    in_flight[remote.remote(spec.model_dump_json(), flag)] = spec
                if not in_flight:
                    return False
                collect(timeout=1.0)
        except KeyboardInterrupt:
            note(
                f"stopping: interrupting {len(in_flight)} running attempts (Ctrl-C again to abandon them)"
            )
            ray.get(flag.set.remote())
            deadline = time.monotonic() + DRAIN_SECONDS
            try:
                while in_flight and time.monotonic() < deadline:
                    collect(timeout=1.0)
            except KeyboardInterrupt:
                pass
            if in_flight:
                for ref in in_flight:
                    ray.cancel(ref, force=True)
                note(
                    f"abandoned {len(in_flight)} attempts; `git worktree prune` cleans up after them"
                )
            return True
    finally:
        signal.signal(signal.SIGTERM, previous_sigterm)
        if started:
            ray.shutdown()
