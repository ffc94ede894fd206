"""The resolved settings one session runs with, derived from the config and the front end."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, JsonValue

from keel.agent.core.config import (
    ApprovalPolicy,
    KeelConfig,
    ModelSettings,
    RunSettings,
    ToolProtocol,
)
from keel.agent.core.model.local.names import is_embedded
from keel.agent.core.model.local.spec import describe_embedded
from keel.agent.core.model.prices import context_window
from keel.agent.core.model.redact import secrets_in_url
from keel.agent.core.model.served_model import ServedModel, describe_served
from keel.agent.core.profile import model_profile, parameters_in_billions
from keel.tools.exec.sandbox_policy import SandboxMode


class SessionSettings(RunSettings):
    """Everything a Session needs to start; front ends build it, the core only reads it.

    The config's run settings (limits, retries, context, sandbox, checkpoints) are RunSettings' fields, shared
    with KeelConfig; the fields here are what the config leaves open: the model resolved, the workspace, the
    front end's part.
    """

    cwd: Path
    model: str
    api_base: str | None = None
    context_window: int | None = None
    tool_protocol: ToolProtocol = "auto"
    approval: ApprovalPolicy = "full-auto"
    interactive: bool = False
    compact_prompt: bool = False  # the small-model profile (agent/core/profile.py)
    profile_reason: str = ""  # why that profile (or not), as session.started says
    profile_chosen: bool = (
        False  # said by hand: a model failing at calls is not moved to the small one
    )
    temperature: float | None = None
    reply_tokens: int | None = None  # a served small model's reply limit (agent/core/profile.py)
    # sent in every request's body as given, over the profile's temperature and reply limit (a trainer's
    # temperature, top_p, top_k...: keel.rollouts(sampling=...)); a call's own max_tokens (a summary's) and
    # what recording tokens asks for still win
    sampling: dict[str, JsonValue] = Field(default_factory=dict)
    parallel_calls: bool = False  # every call of a text-protocol reply runs, not only the first
    # secret values found in the config (URL passwords, URL keys), redacted like env ones
    secrets: list[str] = Field(default_factory=list)
    # what the session tells the person at its start (an untrusted repository's config keys ignored)
    notices: list[str] = Field(default_factory=list)


def settings_from_config(
    config: KeelConfig, cwd: Path, interactive: bool, prepare: bool = True
) -> SessionSettings:
    """Headless runs default to full-auto; a person at the TUI defaults to auto-edit.

    An api_base without a model means the model that server serves (keel.agent.core.model.served_model).

    With prepare=False the embedded model is described, not made ready: the TUI paints first and
    prepares it after (keel.agent.core.model.local.endpoint), where a missing install shows in the transcript.
    """
    if not config.model and config.api_base:
        from keel.agent.core.model.served_model import served_model

        model, api_base = served_model(config.api_base)
        config = config.model_copy(update={"model": model, "api_base": api_base})
    if not config.model or is_embedded(config.model):
        return _embedded(config, cwd, interactive, prepare)
    return _configured(config, cwd, interactive)


def _configured(config: KeelConfig, cwd: Path, interactive: bool) -> SessionSettings:
    own = config.for_model()
    assert config.model is not None  # settings_from_config chose one
    served = _ask_server(config.model, own)
    profile = model_profile(
        config.model, own.api_base, own.prompt, own.temperature, own.parallel_calls, served
    )
    approval = config.approval or ("auto-edit" if interactive else "full-auto")
    fields = {name: getattr(config, name) for name in RunSettings.model_fields}
    if (
        approval == "read-only"
    ):  # what runs anyway (linters, MCP servers) is confined, writing nothing
        fields["sandbox"] = config.sandbox.model_copy(
            update={"mode": SandboxMode.READ_ONLY, "fallback": "refuse"}
        )
    return SessionSettings(
        **fields,
        cwd=cwd,
        model=config.model,
        api_base=own.api_base,
        context_window=own.context_window or served.window,
        tool_protocol=own.tool_protocol or "auto",
        approval=approval,
        interactive=interactive,
        compact_prompt=profile.compact,
        profile_reason=profile.reason,
        profile_chosen=profile.chosen,
        temperature=profile.temperature,
        reply_tokens=profile.reply_tokens,
        parallel_calls=profile.parallel_calls,
        secrets=[
            secret
            for url in [config.api_base, *(m.api_base for m in config.models.values())]
            for secret in secrets_in_url(url)
        ],
        notices=list(config.notices),
    )


def _ask_server(model: str, own: ModelSettings) -> ServedModel:
    """What the model's server says about it, asked only when keel needs it: the profile is automatic and the
    name states no size, or no window is configured and the model map does not know one."""
    if is_embedded(model):
        return ServedModel()
    needs_size = own.prompt in (None, "auto") and parameters_in_billions(model) is None
    needs_window = own.context_window is None and context_window(model) is None
    if not (needs_size or needs_window):
        return ServedModel()
    return describe_served(model, own.api_base)


def _embedded(config: KeelConfig, cwd: Path, interactive: bool, prepare: bool) -> SessionSettings:
    """No model configured, or a `keel-local/...` one: that embedded local model, else the default one
    (LocalModelUnavailable, exit 2, says how to get it; ConfigError names the known ones for an unknown name).
    A tool protocol set in the config or by a flag is kept."""
    chosen = config.for_model().tool_protocol
    if prepare:
        from keel.agent.core.model.local.endpoint import prepare_embedded_model

        endpoint = prepare_embedded_model(config.context_window, model=config.model)
    else:
        endpoint = describe_embedded(config.context_window, config.model)
    settings = _configured(config.model_copy(update={"model": endpoint.model}), cwd, interactive)
    return settings.model_copy(
        update={
            "context_window": endpoint.context_window,
            "tool_protocol": chosen if chosen in ("native", "text") else endpoint.tool_protocol,
        }
    )
