"""The public surface a front end's process sets itself up with: GC tuning, --debug and internal errors,
memory privacy, and trusting a repository's config."""

from __future__ import annotations

from keel.agent.core.diagnostics import (
    describe_internal_error,
    inject_fault,
    log_internal_error,
    set_debug,
)
from keel.agent.core.process_privacy import hide_process_memory
from keel.agent.core.runtime import tune_gc
from keel.agent.core.trust import trust_file, trust_folder

__all__ = [
    "describe_internal_error",
    "hide_process_memory",
    "inject_fault",
    "log_internal_error",
    "set_debug",
    "trust_file",
    "trust_folder",
    "tune_gc",
]
