"""The sandbox policy alone: a small pydantic model the config loads without importing the sandbox itself."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class SandboxMode(str, Enum):
    READ_ONLY = "read-only"
    WORKSPACE_WRITE = "workspace-write"
    FULL_ACCESS = "full-access"


class SandboxPolicy(BaseModel):
    """How run_command confines commands; part of the session's configuration."""

    model_config = ConfigDict(extra="forbid")

    mode: SandboxMode = SandboxMode.WORKSPACE_WRITE
    network: bool = Field(False, description="let sandboxed commands use the network")
    fallback: Literal["refuse", "unsandboxed"] = Field(
        "unsandboxed",
        description="what to do where bubblewrap cannot run: refuse commands, or run them unconfined",
    )
    writable_roots: list[Path] = Field(
        default_factory=list, description="directories writable besides the workspace"
    )
    env_allow: list[str] = Field(
        default_factory=list, description="more environment variables to pass to commands"
    )
