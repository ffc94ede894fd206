"""keel, a local coding agent: `import keel` for the Session, the protocol and running a task.

The repository's folders install as this package's parts: agent/ is keel.agent (the core, its front ends and run
harnesses: ARCHITECTURE.md), tools/ keel.tools, tui/ keel.tui and prompts/ keel.prompts. Importing keel itself
loads nothing else; each name below loads its module on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from keel.agent.core import protocol
    from keel.agent.core.api import (
        find_session,
        is_embedded_model,
        plan_undo,
        prepare_model,
        read_session,
        run_task,
        session_settings,
        stop_model_workers,
    )
    from keel.agent.core.config import KeelConfig, resolve_config
    from keel.agent.core.errors import ExitCode, KeelError
    from keel.agent.core.session import Session
    from keel.agent.core.settings import SessionSettings
    from keel.agent.harness.rollouts.api import (
        Rollout,
        RolloutGroup,
        RolloutTask,
        rollout,
        rollouts,
    )

_PUBLIC = {
    "Session": "keel.agent.core.session",
    "SessionSettings": "keel.agent.core.settings",
    "KeelConfig": "keel.agent.core.config",
    "resolve_config": "keel.agent.core.config",
    "run_task": "keel.agent.core.api",
    "session_settings": "keel.agent.core.api",
    "is_embedded_model": "keel.agent.core.api",
    "prepare_model": "keel.agent.core.api",
    "stop_model_workers": "keel.agent.core.api",
    "plan_undo": "keel.agent.core.api",
    "find_session": "keel.agent.core.api",
    "read_session": "keel.agent.core.api",
    "ExitCode": "keel.agent.core.errors",
    "KeelError": "keel.agent.core.errors",
    "protocol": "keel.agent.core.protocol",
    "rollout": "keel.agent.harness.rollouts.api",
    "rollouts": "keel.agent.harness.rollouts.api",
    "Rollout": "keel.agent.harness.rollouts.api",
    "RolloutGroup": "keel.agent.harness.rollouts.api",
    "RolloutTask": "keel.agent.harness.rollouts.api",
}
__all__ = [
    "ExitCode",
    "KeelConfig",
    "KeelError",
    "Rollout",
    "RolloutGroup",
    "RolloutTask",
    "Session",
    "SessionSettings",
    "__version__",
    "find_session",
    "is_embedded_model",
    "plan_undo",
    "prepare_model",
    "protocol",
    "read_session",
    "resolve_config",
    "rollout",
    "rollouts",
    "run_task",
    "session_settings",
    "stop_model_workers",
]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'keel' has no attribute {name!r}")
    module = import_module(_PUBLIC[name])
    value = module if module.__name__.endswith(f".{name}") else getattr(module, name)
    globals()[name] = value
    return value
