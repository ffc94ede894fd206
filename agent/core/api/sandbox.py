"""The public surface of the sandbox: its policy, and running a command in it as the agent's commands run."""

from __future__ import annotations

from keel.tools.exec.processes import signal_group
from keel.tools.exec.sandbox import (
    bwrap_problem,
    command_environment,
    container_argv,
    jail_argv,
    plan_command,
)
from keel.tools.exec.sandbox_mechanism import sandbox_mechanism
from keel.tools.exec.sandbox_policy import SandboxMode, SandboxPolicy

__all__ = [
    "SandboxMode",
    "SandboxPolicy",
    "bwrap_problem",
    "command_environment",
    "container_argv",
    "jail_argv",
    "plan_command",
    "sandbox_mechanism",
    "signal_group",
]
