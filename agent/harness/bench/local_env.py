"""The local environment: the Dockerfile's supported subset built into a folder, every command in bubblewrap.

No Docker: the workspace is a host folder that bubblewrap shows at the task's WORKDIR (/app), beside a
writable /logs and, when asked, /tests or /solution read-only; the host's programs stand in for the
image's (FROM is not pulled). environment/setup.sh, when a task has one, replaces the Dockerfile here.
"""

from __future__ import annotations

import asyncio
import glob
import os
import posixpath
import shlex
import shutil
from pathlib import Path

from keel.agent.core.api.sandbox import (
    SandboxMode,
    SandboxPolicy,
    bwrap_problem,
    command_environment,
    jail_argv,
)
from keel.agent.harness.batch.runner import CommandOutcome, run_shell
from keel.agent.harness.bench.dockerfile import CopyStep, Recipe, Unsupported, parse_dockerfile
from keel.agent.harness.bench.environment import (
    VERIFIER_LOGS,
    BuildFailed,
    EnvironmentUnavailable,
    TaskEnvironment,
)
from keel.agent.harness.bench.tasks import BenchTask

SETUP_SCRIPT = "setup.sh"


class LocalEnvironment(TaskEnvironment):
    """Runs a task on this machine, confined by bubblewrap; no network unless the task allows it."""

    def __init__(self, task: BenchTask, scratch: Path, network: bool = True) -> None:
        super().__init__(task, scratch)
        self.network = network and self.task.config.environment.network
        self.recipe = Recipe()
        self._stop = asyncio.Event()

    async def build(self, log: Path) -> None:
        problem = await bwrap_problem(shutil.which("bwrap"))
        if problem:
            raise EnvironmentUnavailable(f"the local environment needs bubblewrap: {problem}")
        self.recipe = self._recipe()
        self.workdir = self.recipe.workdir
        self.env = {**self.recipe.env, **self.task.config.environment.env}
        self.workspace.mkdir(parents=True, exist_ok=True)
        (self.logs / "verifier").mkdir(parents=True, exist_ok=True)
        (self.logs / "agent").mkdir(parents=True, exist_ok=True)
        timeout = self.task.config.environment.build_timeout_sec
        setup = self.task.environment_dir / SETUP_SCRIPT
        if setup.is_file():
            mounts = {"/environment": self.task.environment_dir}
            await self._check(f"bash /environment/{SETUP_SCRIPT}", timeout, log, mounts=mounts)
        else:
            for step in self.recipe.steps:
                if isinstance(step, CopyStep):
                    self._copy(step)
                else:
                    command = f"cd {shlex.quote(step.cwd)} && {step.command}"
                    await self._check(command, timeout, log, env=step.env, line=step.line)
        self.snapshot()

    def _recipe(self) -> Recipe:
        workdir = self.task.config.environment.workdir
        if (self.task.environment_dir / SETUP_SCRIPT).is_file():
            return Recipe(workdir=workdir or "/app")
        if not self.task.dockerfile.is_file():
            raise EnvironmentUnavailable(
                f"the task has no environment/Dockerfile and no environment/{SETUP_SCRIPT}"
            )
        try:
            return parse_dockerfile(self.task.dockerfile.read_text(encoding="utf-8"), workdir)
        except Unsupported as exc:
            raise EnvironmentUnavailable(f"its Dockerfile, {exc}") from None

    def _copy(self, step: CopyStep) -> None:
        """COPY as Docker does it: a folder's contents into the destination, files into it or as it."""
        context = self.task.environment_dir.resolve()
        found: list[Path] = []
        for source in step.sources:
            matches = sorted(glob.glob(str(context / source)))
            if not matches:
                raise BuildFailed(f"Dockerfile line {step.line}: COPY source {source!r} not found")
            for match in matches:
                path = Path(match).resolve()
                if not path.is_relative_to(context):
                    raise BuildFailed(
                        f"Dockerfile line {step.line}: {source!r} is outside the context"
                    )
                found.append(path)
        target = self.workspace / posixpath.relpath(step.dest, self.workdir)
        into_folder = step.dest.endswith("/") or len(found) > 1 or target.is_dir()
        for path in found:
            if path.is_dir():
                shutil.copytree(path, target, symlinks=True, dirs_exist_ok=True)
            elif into_folder:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target / path.name)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)

    async def _check(
        self,
        command: str,
        timeout: float,
        log: Path,
        *,
        env: dict[str, str] | None = None,
        mounts: dict[str, Path] | None = None,
        line: int | None = None,
    ) -> None:
        outcome = await self.run(command, timeout=timeout, log=log, env=env, mounts=mounts)
        if not outcome.ok:
            where = f"Dockerfile line {line}: " if line else ""
            raise BuildFailed(f"building the environment failed: {where}{outcome.describe()}")

    def _policy(self, base: SandboxPolicy, env: dict[str, str]) -> SandboxPolicy:
        return base.model_copy(
            update={
                "mode": SandboxMode.WORKSPACE_WRITE,
                "workspace_mount": self.workdir,
                "env": {**base.env, **env},
            }
        )

    async def run(
        self,
        command: str,
        *,
        timeout: float,
        log: Path,
        env: dict[str, str] | None = None,
        mounts: dict[str, Path] | None = None,
    ) -> CommandOutcome:
        policy = self._policy(
            SandboxPolicy(network=self.network, binds={VERIFIER_LOGS: self.logs}),
            {**self.env, **(env or {})},
        )
        command_argv = ["bash", "-c", command]
        argv = jail_argv("bwrap", policy, self.workspace, [], command_argv, mounts)
        environ = command_environment(policy, os.environ, temp_dir="/tmp")
        return await run_shell(shlex.join(argv), self.scratch, timeout, self._stop, log, environ)

    def agent_sandbox(self, base: SandboxPolicy) -> SandboxPolicy:
        policy = self._policy(base, self.env)
        return policy.model_copy(update={"network": base.network and self.network})

    async def close(self) -> None:
        self._stop.set()
        await super().close()
