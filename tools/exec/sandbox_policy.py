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
    env: dict[str, str] = Field(
        default_factory=dict, description="variables set for every command (a bench task's ENV)"
    )
    workspace_mount: str | None = Field(
        None,
        description="where commands see the workspace, e.g. /app for a bench task (bubblewrap only); "
        "file tools read absolute paths under it as workspace paths",
    )
    container: str | None = Field(
        None,
        description="run commands in this running Docker container (docker exec), in workspace_mount",
    )
    binds: dict[str, Path] = Field(
        default_factory=dict,
        description="more writable folders, by where commands see them (with workspace_mount)",
    )
