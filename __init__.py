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
    from keel.agent import protocol
    from keel.agent.api import (
        find_session,
        is_embedded_model,
        plan_undo,
        prepare_model,
        read_session,
        run_task,
        session_settings,
        stop_model_workers,
    )
    from keel.agent.config import KeelConfig, resolve_config
    from keel.agent.errors import ExitCode, KeelError
    from keel.agent.rollouts.api import Rollout, RolloutGroup, RolloutTask, rollout, rollouts
    from keel.agent.session import Session
    from keel.agent.settings import SessionSettings

_PUBLIC = {
    "Session": "keel.agent.session",
    "SessionSettings": "keel.agent.settings",
    "KeelConfig": "keel.agent.config",
    "resolve_config": "keel.agent.config",
    "run_task": "keel.agent.api",
    "session_settings": "keel.agent.api",
    "is_embedded_model": "keel.agent.api",
    "prepare_model": "keel.agent.api",
    "stop_model_workers": "keel.agent.api",
    "plan_undo": "keel.agent.api",
    "find_session": "keel.agent.api",
    "read_session": "keel.agent.api",
    "ExitCode": "keel.agent.errors",
    "KeelError": "keel.agent.errors",
    "protocol": "keel.agent.protocol",
    "rollout": "keel.agent.rollouts.api",
    "rollouts": "keel.agent.rollouts.api",
    "Rollout": "keel.agent.rollouts.api",
    "RolloutGroup": "keel.agent.rollouts.api",
    "RolloutTask": "keel.agent.rollouts.api",
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
