"""The resolved settings one session runs with, derived from the config and the front end."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from agent.config import (
    ApprovalPolicy,
    ContextSettings,
    KeelConfig,
    ToolProtocol,
)
from agent.errors import ConfigError
from agent.redact import secrets_in_url
from tools.sandbox_policy import SandboxPolicy


class SessionSettings(BaseModel):
    """Everything a Session needs to start; front ends build it, the core only reads it."""

    model_config = ConfigDict(extra="forbid")

    cwd: Path
    model: str
    api_base: str | None = None
    context_window: int | None = None
    tool_protocol: ToolProtocol = "auto"
    approval: ApprovalPolicy = "full-auto"
    interactive: bool = False
    max_steps: int = 200
    budget: int | None = None
    retries: int = 4
    retry_base_delay: float = 0.5
    request_timeout: float = 600.0
    compact_prompt: bool = False
    checkpoints: bool = True  # snapshot the workspace before each turn's first change, for `keel undo`
    context: ContextSettings = ContextSettings()
    sandbox: SandboxPolicy = SandboxPolicy()
    secrets: list[str] = []  # secret values found in the config (URL passwords, URL keys), redacted like env ones


def settings_from_config(config: KeelConfig, cwd: Path, interactive: bool) -> SessionSettings:
    """Headless runs default to full-auto; a person at the TUI defaults to auto-edit."""
    if not config.model:
        raise ConfigError(
            "no model configured: pass --model (e.g. --model openai/gpt-4o-mini), set KEEL_MODEL, "
            'or add `model = "..."` to .keel/config.toml; `keel models` shows the options'
        )
    own = config.for_model()
    return SessionSettings(
        cwd=cwd,
        model=config.model,
        api_base=own.api_base,
        context_window=own.context_window,
        tool_protocol=own.tool_protocol or "auto",
        approval=config.approval or ("auto-edit" if interactive else "full-auto"),
        interactive=interactive,
        max_steps=config.max_steps,
        budget=config.budget,
        retries=config.retries,
        retry_base_delay=config.retry_base_delay,
        request_timeout=config.request_timeout,
        context=config.context,
        sandbox=config.sandbox,
        checkpoints=config.checkpoints,
        secrets=[
            secret
            for url in [config.api_base, *(m.api_base for m in config.models.values())]
            for secret in secrets_in_url(url)
        ],
    )
