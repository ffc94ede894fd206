"""Where a bench task runs: the interface both environments share, and what a command in one returns.

An environment builds the task's workspace (a host folder the agent's file tools work on), runs the
oracle's and the verifier's commands where the task expects them (/app, /tests, /solution, /logs), and
gives the agent's run_command the same place through its sandbox policy.
"""

from __future__ import annotations

import shutil
from abc import ABC, abstractmethod
from pathlib import Path

from keel.agent.core.api.git import NEUTRAL_CONFIG, Git
from keel.agent.core.api.sandbox import SandboxPolicy
from keel.agent.core.errors import KeelError
from keel.agent.harness.batch.runner import CommandOutcome
from keel.agent.harness.bench.tasks import BenchTask

VERIFIER_LOGS = "/logs"
UNTRACKED = "__pycache__/\n*.pyc\n.pytest_cache/\n"


class EnvironmentUnavailable(KeelError):
    """This environment cannot serve the task here (no bubblewrap, a Dockerfile needing Docker): skipped."""


class BuildFailed(KeelError):
    """Building the environment ran and failed (a COPY source missing, a RUN that exited non-zero)."""


class TaskEnvironment(ABC):
    """One attempt's environment; `workspace` is the host folder seen at `workdir` inside it."""

    def __init__(self, task: BenchTask, scratch: Path) -> None:
        self.task = task
        self.scratch = scratch
        self.workspace = scratch / "workspace"
        self.logs = scratch / "logs"
        self.workdir = "/app"
        self.env: dict[str, str] = {}

    @abstractmethod
    async def build(self, log: Path) -> None:
        """Make the workspace as the task's environment defines it."""

    @abstractmethod
    async def run(
        self,
        command: str,
        *,
        timeout: float,
        log: Path,
        env: dict[str, str] | None = None,
        mounts: dict[str, Path] | None = None,
    ) -> CommandOutcome:
        """Run a shell command in the workdir; `mounts` shows host folders read-only (/tests, /solution)."""

    @abstractmethod
    def agent_sandbox(self, base: SandboxPolicy) -> SandboxPolicy:
        """The agent's sandbox policy: its commands run where this environment's commands run."""

    async def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)

    def snapshot(self) -> None:
        """Commit the built workspace, so the agent's patch is a diff against it."""
        (self.workspace / ".git").mkdir(exist_ok=True)
        git = self._git()
        git.text("init", "-q")
        (self.workspace / ".git" / "info").mkdir(exist_ok=True)
        (self.workspace / ".git" / "info" / "exclude").write_text(UNTRACKED)
        git.text("add", "-A")
        git.text("commit", "-q", "--allow-empty", "--no-verify", "-m", "environment")

    def patch(self) -> bytes:
        """What changed in the workspace since it was built, as a binary git diff."""
        git = self._git()
        git.text("add", "-A")
        return git.binary("diff", "--cached", "--binary", "HEAD")

    def _git(self) -> Git:
        return Git(
            self.workspace, config=NEUTRAL_CONFIG, where=f"in the workspace of {self.task.id}"
        )
