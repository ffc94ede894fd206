"""The model and policy flags of `keel`, `keel run` and `keel batch`, defined once with the config key each sets."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple


class ModelFlag(NamedTuple):
    """One flag: its name, the config key it sets (a dotted path), and how argparse reads it."""

    flag: str
    key: str
    help: str
    type: Callable[[str], Any] | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    switch: bool = False  # a flag without a value: it sets the key to True

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")


def model_file_flag(text: str) -> str:
    """`--model-file PATH` is `--model keel-local/<PATH made absolute>`."""
    from keel.agent.core.api.models import file_model_name, resolve_file

    return file_model_name(resolve_file(text))


PROFILES = {"small": "compact", "full": "full", "auto": "auto"}


def profile_flag(text: str) -> str:
    """`--profile small|full|auto` sets the config's `prompt` (small is its "compact")."""
    if text not in PROFILES:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text!r} (choose from {', '.join(PROFILES)})"
        )
    return PROFILES[text]


MODEL_FLAGS = (
    ModelFlag(
        "--model", "model", "litellm model name, e.g. openai/gpt-4o-mini or ollama/qwen2.5-coder"
    ),
    ModelFlag(
        "--model-file",
        "model",
        "a GGUF file to run locally with llama.cpp, in keel's model worker process (the same as "
        "--model keel-local/PATH)",
        type=model_file_flag,
        metavar="PATH",
    ),
    ModelFlag(
        "--api-base",
        "api_base",
        "base URL of an OpenAI-compatible or other litellm-supported server",
    ),
    ModelFlag(
        "--context-window",
        "context_window",
        "context window for models litellm does not know (default 32768)",
        type=int,
        metavar="TOKENS",
    ),
    ModelFlag(
        "--profile",
        "prompt",
        "how keel talks to the model: small (compact prompt, fewer tools), full, or auto: small when the "
        "server, the name or the model map says it is a model of 4B parameters or less",
        type=profile_flag,
        metavar="small|full|auto",
    ),
    ModelFlag(
        "--tool-protocol",
        "tool_protocol",
        "native tool calls, or tools described in the prompt (text); auto falls back",
        choices=("auto", "native", "text"),
    ),
    ModelFlag("--budget", "budget", "token budget for the task", type=int, metavar="TOKENS"),
    ModelFlag("--max-steps", "max_steps", "stop after N tool-calling steps", type=int, metavar="N"),
    ModelFlag(
        "--approval",
        "approval",
        "what may run without asking (headless default: full-auto)",
        choices=("read-only", "auto-edit", "full-auto"),
    ),
    ModelFlag(
        "--sandbox",
        "sandbox.mode",
        "how commands are confined; read-only also stops the file tools (default: workspace-write)",
        choices=("read-only", "workspace-write", "full-access"),
    ),
    ModelFlag(
        "--allow-network",
        "sandbox.network",
        "let sandboxed commands and the web_fetch tool use the network",
        switch=True,
    ),
    ModelFlag(
        "--record-tokens",
        "record_tokens",
        "log each model call's token ids and logprobs, where the server returns them (vLLM, the "
        "embedded model)",
        switch=True,
    ),
)


def add_model_flags(
    parser: argparse.ArgumentParser, default: Any = None, notes: Mapping[str, str] | None = None
) -> None:
    """The model flags; subcommands pass SUPPRESS so they do not overwrite flags given before them.
    `notes` adds what a flag means for this command to its help (`--model`: a task's `model` overrides it)."""
    group = parser.add_argument_group("model")
    for spec in MODEL_FLAGS:
        note = (notes or {}).get(spec.flag)
        text = f"{spec.help}; {note}" if note else spec.help
        if spec.switch:
            group.add_argument(spec.flag, default=default, action="store_true", help=text)
        elif spec.type is not None:
            group.add_argument(
                spec.flag, default=default, type=spec.type, metavar=spec.metavar, help=text
            )
        else:
            group.add_argument(spec.flag, default=default, choices=spec.choices, help=text)
    parser.add_argument(  # not a model flag: it says whether the repository's config applies in full
        "--trust",
        default=default,
        action="store_true",
        help="trust this repository's .keel/config.toml for this run (`keel trust` records it)",
    )


def config_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys the flags set, nested as the config is (None: not given), for resolve_config."""
    flags: dict[str, Any] = {}
    tables: dict[str, dict[str, Any]] = {}
    given: dict[str, str] = {}  # key -> the flag that set it (--model and --model-file share one)
    for spec in MODEL_FLAGS:
        value = getattr(args, spec.dest, None)
        table, _, key = spec.key.rpartition(".")
        if not table:
            if value is not None and key in given:
                from keel.agent.core.errors import UsageError

                raise UsageError(f"{given[key]} and {spec.flag} both choose the {key}; give one")
            if value is not None:
                given[key] = spec.flag
            if value is not None or key not in flags:
                flags[key] = value
        elif value is not None:
            tables.setdefault(table, {})[key] = value
    for spec in MODEL_FLAGS:  # a table no flag set stays unset, so the config files' one applies
        table = spec.key.rpartition(".")[0]
        if table:
            flags[table] = tables.get(table)
    flags["trust"] = getattr(args, "trust", None)  # ConfigSources takes it out: it is no config key
    return flags


def add_debug_flag(parser: argparse.ArgumentParser, default: Any = False) -> None:
    """`--debug`: an internal error's traceback on stderr too (it always goes to $KEEL_HOME/logs/)."""
    parser.add_argument(
        "--debug",
        default=default,
        action="store_true",
        help="print the traceback of an internal error (it is always logged under KEEL_HOME/logs)",
    )
