"""The Docker environment, when a daemon answers: the task's image built as is, the workspace copied out of
it and mounted back at the workdir, every command a `docker exec` in the one container."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import shlex
import subprocess
from pathlib import Path

from keel.agent.core.api.sandbox import SandboxMode, SandboxPolicy, container_argv
from keel.agent.harness.batch.runner import CommandOutcome, run_shell
from keel.agent.harness.bench.environment import (
    VERIFIER_LOGS,
    BuildFailed,
    EnvironmentUnavailable,
    TaskEnvironment,
)
from keel.agent.harness.bench.tasks import BenchTask

DOCKER_PROBE_SECONDS = 10.0


@functools.cache
def docker_problem() -> str | None:
    """None when a Docker daemon answers here; otherwise why not (probed once a process)."""
    try:
        done = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=DOCKER_PROBE_SECONDS,
            check=False,
        )
    except FileNotFoundError:
        return "the docker command is not installed"
    except subprocess.TimeoutExpired:
        return "the Docker daemon did not answer"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return f"no Docker daemon answers ({lines[-1] if lines else 'docker info failed'})"
    return None


def docker_reachable() -> bool:
    return docker_problem() is None


class DockerEnvironment(TaskEnvironment):
    """One container per attempt, kept running (`sleep infinity`) while the agent and verifier work."""

    def __init__(self, task: BenchTask, scratch: Path, network: bool = True) -> None:
        super().__init__(task, scratch)
        self.network = network and task.config.environment.network
        digest = hashlib.sha256(str(scratch).encode()).hexdigest()[:10]
        self.image = task.config.environment.docker_image or f"keel-bench-{task.id.lower()}"
        self.container = f"keel-bench-{task.id.lower()}-{digest}"
        self._stop = asyncio.Event()
        self._started = False

    async def _docker(self, *args: str, timeout: float, log: Path) -> CommandOutcome:
        return await run_shell(
            shlex.join(["docker", *args]), self.scratch, timeout, self._stop, log
        )

    async def _must(self, *args: str, timeout: float, log: Path) -> None:
        outcome = await self._docker(*args, timeout=timeout, log=log)
        if not outcome.ok:
            raise BuildFailed(f"building the environment failed: {outcome.describe()}")

    async def build(self, log: Path) -> None:
        if problem := docker_problem():
            raise EnvironmentUnavailable(f"the Docker environment: {problem}")
        config = self.task.config.environment
        self.scratch.mkdir(parents=True, exist_ok=True)
        (self.logs / "verifier").mkdir(parents=True, exist_ok=True)
        timeout = config.build_timeout_sec
        if not config.docker_image:
            context = str(self.task.environment_dir)
            await self._must("build", "-q", "-t", self.image, context, timeout=timeout, log=log)
        self.workdir = config.workdir or await self._image_workdir(log)
        self.env = dict(config.env)
        # the image's workdir becomes a host folder the agent's file tools edit
        staging = f"{self.container}-copy"
        await self._must("create", "--name", staging, self.image, timeout=timeout, log=log)
        try:
            self.workspace.mkdir(parents=True, exist_ok=True)
            await self._must(
                "cp", f"{staging}:{self.workdir}/.", str(self.workspace), timeout=timeout, log=log
            )
        finally:
            await self._docker("rm", "-f", staging, timeout=timeout, log=log)
        network = [] if self.network else ["--network", "none"]
        await self._must(
            "run", "-d", "--name", self.container, *network,
            "-v", f"{self.workspace}:{self.workdir}", "-v", f"{self.logs}:{VERIFIER_LOGS}",
            "-w", self.workdir, "--entrypoint", "sleep", self.image, "infinity",
            timeout=timeout, log=log,
        )  # fmt: skip
        self._started = True
        self.snapshot()

    async def _image_workdir(self, log: Path) -> str:
        done = await asyncio.to_thread(
            subprocess.run,
            ["docker", "image", "inspect", "-f", "{{.Config.WorkingDir}}", self.image],
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip() or "/app"

    async def run(
        self,
        command: str,
        *,
        timeout: float,
        log: Path,
        env: dict[str, str] | None = None,
        mounts: dict[str, Path] | None = None,
    ) -> CommandOutcome:
        for seen, host in (
            mounts or {}
        ).items():  # copied in, as Harbor uploads tests/ and solution/
            await self._docker("exec", self.container, "mkdir", "-p", seen, timeout=60, log=log)
            await self._docker("cp", f"{host}/.", f"{self.container}:{seen}", timeout=300, log=log)
        policy = self.agent_sandbox(SandboxPolicy()).model_copy(
            update={"env": {**self.env, **(env or {})}}
        )
        argv = container_argv(policy, ["bash", "-c", command])
        return await run_shell(shlex.join(argv), self.scratch, timeout, self._stop, log)

    def agent_sandbox(self, base: SandboxPolicy) -> SandboxPolicy:
        return base.model_copy(
            update={
                "mode": SandboxMode.FULL_ACCESS,
                "container": self.container,
                "workspace_mount": self.workdir,
                "env": {**base.env, **self.env},
            }
        )

    async def close(self) -> None:
        self._stop.set()
        if self._started:
            await asyncio.to_thread(
                subprocess.run,
                ["docker", "rm", "-f", self.container],
                capture_output=True,
                check=False,
            )
        await super().close()
