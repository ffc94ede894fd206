"""Configuration: TOML files, environment and flags, resolved in the README's order into one pydantic model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
)
from pydantic_core import PydanticCustomError

from keel.agent.core.config_files import ConfigSources, env_layer
from keel.agent.core.config_trust import narrowed, untrusted_notice
from keel.agent.core.errors import ConfigError
from keel.agent.core.hooks.config import HookGroup, HooksTable, claude_hooks, joined
from keel.tools.exec.sandbox_policy import SandboxPolicy
from keel.tools.mcp.config import McpServerConfig, check_server_names

ApprovalPolicy = Literal["read-only", "auto-edit", "full-auto"]
ToolProtocol = Literal["auto", "native", "text"]


def _small_is_compact(value: object) -> object:
    """`prompt = "small"` (as `--profile small` says it) is the compact profile."""
    return "compact" if value == "small" else value


# the small-model profile (agent/core/profile.py): "compact" (or "small"), "full", or "auto" by the model's size
PromptProfile = Annotated[Literal["auto", "full", "compact"], BeforeValidator(_small_is_compact)]
DEFAULT_CONTEXT_WINDOW = 32_768
# keel's instructions and tool descriptions take about 2,500 tokens: below this nothing fits beside them
MIN_CONTEXT_WINDOW = 4_096


def _usable_window(tokens: int | None) -> int | None:
    if tokens is not None and tokens < MIN_CONTEXT_WINDOW:
        raise PydanticCustomError(
            "window_too_small",
            "{tokens} tokens is too small: keel's instructions and tools alone take about 2,500; "
            "give at least {least} (the default is {default})",
            {"tokens": tokens, "least": MIN_CONTEXT_WINDOW, "default": DEFAULT_CONTEXT_WINDOW},
        )
    return tokens


ContextWindow = Annotated[int | None, AfterValidator(_usable_window)]


def _server_names(servers: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
    check_server_names(list(servers))
    return servers


McpServers = Annotated[dict[str, McpServerConfig], AfterValidator(_server_names)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelSettings(Strict):
    """Per-model settings, under `[models."NAME"]` in a config file."""

    api_base: str | None = None
    context_window: ContextWindow = None
    tool_protocol: ToolProtocol | None = None
    prompt: PromptProfile | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    parallel_calls: bool | None = None


class LoopSettings(Strict):
    """When a reply ends the task: corrections of replies that tried to call a tool and failed, one nudge
    when a task that asks for a change ends with nothing changed (README: "How a task ends")."""

    correct_attempted_calls: bool = True
    max_corrections: int = Field(
        default=3, ge=1, description="corrections in a row before the task stops with an error"
    )
    nudge_without_change: Literal["small-models", "always", "never"] = "small-models"
    # check the files a task changed (syntax, lint, tests) before it ends; failures go back to the model
    verify: Literal["small-models", "always", "never"] = "small-models"
    verify_retries: int = Field(
        default=2, ge=0, description="times failed checks go back to the model before the task ends"
    )
    verify_timeout: int = Field(default=300, ge=1, description="seconds the test run may take")


class ContextSettings(Strict):
    """When and how the context is compacted."""

    summarize_at: float = Field(default=0.8, gt=0.1, lt=1.0)
    summarize_at_tokens: int | None = Field(default=None, gt=0)
    keep_tool_outputs: int = Field(
        default=2, ge=0, description="turns whose outputs masking never touches"
    )
    # each call's status line stays in the history, so that every prompt extends the last prompt and reply
    # until a masking pass or a summary (for training on a rollout as one sequence; it costs context)
    append_only: bool = False


class ModelChoice(Strict):
    """Which model, and how to reach it, as the config says; a session gets them resolved (SessionSettings)."""

    model: str | None = None
    api_base: str | None = None
    context_window: ContextWindow = None
    tool_protocol: ToolProtocol = "auto"
    approval: ApprovalPolicy | None = None
    # the small-model profile (agent/core/profile.py): "auto" picks it by the model's size or window
    prompt: PromptProfile = "auto"
    temperature: float | None = Field(default=None, ge=0, le=2)
    parallel_calls: bool | None = (
        None  # run every call of a text-protocol reply, not only the first
    )


class RunSettings(Strict):
    """The settings a session takes from the config as they are: defined once, here, for both.

    KeelConfig and SessionSettings both derive from this model, so neither copies these fields.
    """

    max_steps: int = Field(default=200, gt=0)
    budget: int | None = Field(default=None, gt=0)
    auto_budget: bool = True  # without a budget, estimate one from the task (see README)
    retries: int = Field(default=4, ge=0)
    retry_base_delay: float = Field(default=0.5, ge=0)
    request_timeout: float = Field(default=600.0, gt=0)
    # seconds without a byte of a reply that has begun before the try is given up as stalled (and retried)
    stall_timeout: float = Field(default=120.0, gt=0)
    # snapshot the workspace before each turn's first change, for `keel undo`
    checkpoints: bool = True
    # ask the server for each call's token ids and logprobs and log them (for training exports)
    record_tokens: bool = False
    # whether the model takes images (prompt images, read_file of a PNG); unset: as litellm's model map says
    images: bool | None = None
    # the command that runs the project's tests, as `keel setup` verified it (the system prompt says it)
    test_command: str | None = None
    # keel may run test_command itself to verify a change (never an untrusted repository's: agent/core/config_trust)
    run_test_command: bool = True
    context: ContextSettings = ContextSettings()
    loop: LoopSettings = LoopSettings()
    sandbox: SandboxPolicy = SandboxPolicy()
    # MCP servers whose tools the model is offered (tools/mcp; README: "Adding an MCP server")
    mcp_servers: McpServers = {}
    # commands run at points of a session (agent/core/hooks, README "Hooks"); never an untrusted repository's
    hooks: HooksTable = {}


class KeelConfig(RunSettings, ModelChoice):
    """Everything a session can be told; every field may come from a file, the environment or a flag.

    Its keys, in order: ModelChoice's, RunSettings', then the per-model tables.
    """

    models: dict[str, ModelSettings] = {}
    # what the launch should tell the person about the config (keys of an untrusted repository ignored)
    _notices: list[str] = PrivateAttr(default_factory=list)

    @property
    def notices(self) -> list[str]:
        return self._notices

    def for_model(self) -> ModelSettings:
        """The effective settings of the chosen model: its own table over the top-level keys."""
        own = self.models.get(self.model or "", ModelSettings())
        return ModelSettings(
            api_base=self.api_base or own.api_base,
            context_window=self.context_window or own.context_window,
            tool_protocol=own.tool_protocol if self.tool_protocol == "auto" else self.tool_protocol,
            prompt=own.prompt if self.prompt == "auto" else self.prompt,
            temperature=self.temperature if self.temperature is not None else own.temperature,
            parallel_calls=(
                self.parallel_calls if self.parallel_calls is not None else own.parallel_calls
            ),
        )


def _describe(error: ValidationError, path: Path) -> str:
    item = error.errors()[0]
    key = ".".join(str(p) for p in item["loc"])
    if item["type"] == "extra_forbidden":
        allowed = ", ".join(_allowed_keys(item["loc"]))
        return f"{path}: unknown key {key!r}; allowed keys here: {allowed}"
    return f"{path}: bad value for {key!r}: {item['msg']}"


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] = KeelConfig
    for part in loc[:-1]:
        if part in ("models", "mcp_servers"):
            model = ModelSettings if part == "models" else McpServerConfig
            continue
        if part == "hooks":
            model = HookGroup
            continue
        field = model.model_fields.get(str(part))
        annotation = getattr(field, "annotation", None) if field else None
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
    return list(model.model_fields)


def load_file(path: Path) -> dict[str, Any]:
    """One config file's keys, checked against the schema; a broken file is a ConfigError naming it."""
    import tomllib  # only when there is a file: most launches have none

    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        KeelConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path)) from None
    return raw


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def merged_layers(files: list[Path]) -> dict[str, Any]:
    """The files' keys merged in order (later over earlier), each checked as load_file checks it."""
    layers: dict[str, Any] = {}
    for path in files:
        layers = _merge(layers, load_file(path))
    return layers


def resolve_config(cwd: Path, flags: dict[str, Any]) -> KeelConfig:
    """Flags over environment over the repo's `.keel/config.toml` over the user's config file."""
    return ConfigSources.find(cwd, flags).config()


def _hooks_of(below: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    """The hooks of both layers (each layer's commands run, where other keys are replaced), or nothing."""
    if "hooks" not in layer:
        return {}
    return {"hooks": joined(below.get("hooks"), layer["hooks"])}


def config_from(sources: ConfigSources) -> KeelConfig:
    """The sources' layers merged in that order and validated; a broken file or value is a ConfigError."""
    layers: dict[str, Any] = {}
    notices = []
    for path in sources.files:
        layer = load_file(path)
        if path == sources.repo_file and not sources.trusted:
            layer, ignored = narrowed(layer, layers)
            if ignored:
                notices.append(untrusted_notice(str(path), str(path.parent.parent), ignored))
        layers = _merge(layers, layer) | _hooks_of(layers, layer)
    for path in sources.claude_files:  # Claude Code's settings.json "hooks", as they are
        if sources.trusted:
            layers |= _hooks_of(layers, {"hooks": claude_hooks(path)})
        elif claude_hooks(path):
            notices.append(untrusted_notice(str(path), str(path.parent.parent), ["hooks"]))
    layers = _merge(layers, env_layer())
    layers = _merge(layers, sources.flags)
    try:
        config = KeelConfig.model_validate(layers)
    except ValidationError as exc:
        item = exc.errors()[0]
        key = ".".join(str(p) for p in item["loc"])
        where = f"--{key.replace('_', '-')}" if sources.flags.get(key) is not None else repr(key)
        raise ConfigError(f"bad value for {where}: {item['msg']}") from None
    config._notices = notices
    return config
