"""One attempt of one task: build the environment, run the agent, run the verifier, keep the patch and logs."""

from __future__ import annotations

import asyncio
import time
import traceback
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from keel.agent.core.errors import KeelError
from keel.agent.core.settings import SessionSettings
from keel.agent.harness.batch.runner import attempt_file
from keel.agent.harness.bench.agents import (
    DEFAULT_AGENT_SECONDS,
    AgentName,
    AgentOutcome,
    run_keel,
    run_oracle,
)
from keel.agent.harness.bench.environment import (
    BuildFailed,
    EnvironmentUnavailable,
    TaskEnvironment,
)
from keel.agent.harness.bench.results import BenchRow
from keel.agent.harness.bench.tasks import BenchTask
from keel.agent.harness.bench.verifier import verify

EnvironmentKind = Literal["local", "docker", "auto"]


class TrialSpec(BaseModel):
    """Everything one attempt needs; plain data, so it travels to a Ray worker as JSON."""

    task: BenchTask
    attempt: int
    agent: AgentName = "keel"
    settings: SessionSettings | None = None
    out_dir: Path
    environment: EnvironmentKind = "auto"
    agent_timeout: float | None = None
    network: bool = True
    keep_workspace: bool = False

    def file(self, kind: str, suffix: str) -> Path:
        return attempt_file(self.out_dir, self.task.id, self.attempt, kind, suffix)


def make_environment(spec: TrialSpec) -> TaskEnvironment:
    """Docker when asked for, or (auto) when a daemon answers; else the local environment."""
    from keel.agent.harness.bench.docker_env import DockerEnvironment, docker_reachable
    from keel.agent.harness.bench.local_env import LocalEnvironment

    scratch = spec.file("work", "")
    if spec.environment == "docker" or (spec.environment == "auto" and docker_reachable()):
        return DockerEnvironment(spec.task, scratch, spec.network)
    return LocalEnvironment(spec.task, scratch, spec.network)


class Trial:
    """Runs one attempt to a BenchRow; whatever happens, the environment is closed at the end."""

    def __init__(self, spec: TrialSpec, stop: asyncio.Event) -> None:
        self.spec = spec
        self.stop = stop
        task = spec.task
        model = spec.settings.model if spec.agent == "keel" and spec.settings else None
        self.row = BenchRow(
            id=task.id,
            attempt=spec.attempt,
            status="error",
            agent=spec.agent,
            model=model,
            category=task.config.category,
        )

    async def run(self) -> BenchRow:
        started = time.monotonic()
        environment = make_environment(self.spec)
        try:
            await self._run(environment)
        except EnvironmentUnavailable as exc:
            self.row.status, self.row.reason = "skipped", str(exc)
        except BuildFailed as exc:
            self.row.status, self.row.reason = "setup_failed", str(exc)
        except KeelError as exc:
            self.row.status, self.row.reason = "error", str(exc)
        except Exception as exc:  # noqa: BLE001 -- a bug must cost one attempt, not the whole run
            self.row.status, self.row.reason = (
                "error",
                f"internal error: {type(exc).__name__}: {exc}",
            )
            self._write("logs", ".error.txt", traceback.format_exc())
        finally:
            if not self.spec.keep_workspace:
                await environment.close()
            self.row.duration = round(time.monotonic() - started, 3)
        return self.row

    async def _run(self, environment: TaskEnvironment) -> None:
        if self.stop.is_set():
            self.row.status, self.row.reason = "interrupted", "stopped before it started"
            return
        await environment.build(self.spec.file("logs", ".build.log"))
        outcome = await self._agent(environment)
        self.row.status, self.row.reason = outcome.status, outcome.reason  # type: ignore[assignment]
        usage = outcome.usage
        self.row.tokens, self.row.prompt_tokens = usage.total_tokens, usage.prompt_tokens
        self.row.completion_tokens, self.row.cached_tokens = (
            usage.completion_tokens,
            usage.cached_tokens,
        )
        self.row.steps, self.row.cost = outcome.steps, outcome.cost
        self._save_patch(environment)
        if outcome.status == "interrupted":
            return  # stopped from outside: no verdict
        verdict = await verify(environment, self.spec.file("logs", ".verifier.log"))
        self.row.reward, self.row.passed = verdict.reward, verdict.passed
        if verdict.problem:
            self.row.reason = "; ".join(part for part in (self.row.reason, verdict.problem) if part)
        if verdict.stopped:
            self.row.status = "interrupted"
        elif verdict.broken:
            self.row.status = "verifier_failed"  # not the agent's failure: no verdict

    async def _agent(self, environment: TaskEnvironment) -> AgentOutcome:
        task = self.spec.task
        timeout = self.spec.agent_timeout or task.config.agent.timeout_sec or DEFAULT_AGENT_SECONDS
        if self.spec.agent == "nop":
            return AgentOutcome()
        if self.spec.agent == "oracle":
            return await run_oracle(environment, timeout, self.spec.file("logs", ".agent.log"))
        assert self.spec.settings is not None, "the keel agent needs session settings"
        return await run_keel(environment, self.spec.settings, timeout, self.stop, self._note_log)

    def _note_log(self, path: Path) -> None:
        self.row.session_log = str(path)

    def _save_patch(self, environment: TaskEnvironment) -> None:
        patch = environment.patch()
        if patch:
            self.row.patch = str(self._write("patches", ".patch", patch))

    def _write(self, kind: str, suffix: str, content: str | bytes) -> Path:
        path = self.spec.file(kind, suffix)
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path


async def run_trial(spec: TrialSpec, stop: asyncio.Event | None = None) -> BenchRow:
    """Run one attempt; always ends with its environment closed (unless kept)."""
    return await Trial(spec, stop or asyncio.Event()).run()


def trial_in_worker(spec_json: str, flag: object) -> str:
    """The body of a Ray task for `keel bench --backend ray` (see keel.agent.harness.batch.ray_backend)."""
    from keel.agent.harness.batch.ray_backend import until_stopped

    spec = TrialSpec.model_validate_json(spec_json)
    return asyncio.run(until_stopped(run_trial, spec, flag)).to_json()
