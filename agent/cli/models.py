"""`keel models`: the configured model, the embedded ones and whether each is installed, the GGUF files in keel's
models folder, and how to use others."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path
from typing import TextIO

from keel.agent.core.api.models import (
    EMBEDDED_MODELS,
    EmbeddedModel,
    ModelFileStatus,
    default_model,
    file_of,
    file_problem,
    gguf_info,
    is_embedded,
    last_crash,
    local_model_name,
    model_status,
    models_dir,
    said_missing,
)
from keel.agent.core.config import KeelConfig
from keel.agent.core.errors import ConfigError, ExitCode

REBUILD_HINT = (
    'If it crashes again, rebuild llama.cpp for a generic CPU: CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install '
    "--force-reinstall --no-cache-dir llama-cpp-python==0.3.36, or use another model (below)."
)

API_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
)

OTHER_MODELS = """\
Other models: any litellm model name, with --model (and --api-base for a server):
  Ollama      ollama pull qwen2.5-coder:7b
              keel run --model ollama_chat/qwen2.5-coder:7b --api-base http://127.0.0.1:11434 "..."
  llama.cpp   llama-server -m MODEL.gguf --jinja --port 8080
              keel run --model openai/local --api-base http://127.0.0.1:8080/v1 "..."
  vLLM        vllm serve Qwen/Qwen2.5-Coder-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes
              keel run --model hosted_vllm/Qwen/Qwen2.5-Coder-7B-Instruct --api-base http://127.0.0.1:8000/v1 "..."
  API         export OPENAI_API_KEY=...     keel run --model openai/gpt-4o-mini "..."
              export ANTHROPIC_API_KEY=...  keel run --model anthropic/claude-sonnet-4-5 "..."
  Models litellm does not know: add --context-window TOKENS (default 32768); without native tool calls,
  --tool-protocol text.

To make one the default: set KEEL_MODEL (and KEEL_API_BASE), or put it in .keel/config.toml (this repository)
or ~/.config/keel/config.toml (you):
  model = "ollama_chat/qwen2.5-coder:7b"
  api_base = "http://127.0.0.1:11434"

  [models."ollama_chat/qwen2.5-coder:7b"]
  context_window = 32768
"""


def _package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _file_state(status: ModelFileStatus) -> str:
    if status.verified:
        return f"{status.path} (assembled and verified)"
    if status.assembled:
        return f"{status.path} (assembled; verified on first use)"
    if status.path.exists():
        return f"{status.path} (not valid: it is re-assembled on first use)"
    return f"{status.path} (assembled from the pieces on first use)"


def _model_lines(model: EmbeddedModel, runtime: str | None) -> list[str]:
    """One embedded model: its name, whether it is ready, and how to install or use it."""
    status = model_status(model)
    default = model == default_model()
    crash = last_crash(status.path)
    if not runtime or not (status.pieces_installed or status.verified):
        state = f"not installed: {model.install_command}"
    elif crash is not None:
        state = f"installed; keel starts a new worker after a crash. {REBUILD_HINT}"
    elif default:
        state = "ready: keel runs on it when no model is configured"
    else:
        state = f'ready: keel run --model {model.model} (or model = "{model.model}" in a config)'
    pieces = (
        "installed"
        if status.pieces_installed
        else f"missing {said_missing(model, status.missing_pieces)}"
    )
    lines = [
        f"  {model.model}{'  (the default)' if default else ''}",
        f"    {model.title} GGUF, {model.size / 1e6:,.0f} MB",
        f"    state         {state}",
        f"    pieces        {pieces}",
        f"    model file    {_file_state(status)}",
    ]
    if crash is not None:
        lines.append(f"    last crash    {crash.time}: {crash.what}")
    return lines


def _embedded_lines() -> list[str]:
    runtime = (
        _package_version("llama-cpp-python") if importlib.util.find_spec("llama_cpp") else None
    )
    installed = f"installed ({runtime})" if runtime else "not installed"
    lines = [
        f"Embedded models, run by llama.cpp in a worker process (llama-cpp-python {installed}):"
    ]
    for model in EMBEDDED_MODELS:
        lines += _model_lines(model, runtime)
    return lines


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.0f} MB" if size >= 1e6 else f"{size / 1e6:.2f} MB"


def _parameters(count: int) -> str:
    if count >= 1e9:
        return f"{count / 1e9:.1f}B parameters"
    return f"{count / 1e6:.1f}M parameters" if count >= 1e6 else f"{count:,} parameters"


def _file_lines(path: Path, folder: Path) -> list[str]:
    """One GGUF file of the models folder: the catalog's, or what it is and how to run it."""
    shown, size = path.relative_to(folder), _megabytes(path.stat().st_size)
    catalog = next((model for model in EMBEDDED_MODELS if model.file == path.name), None)
    if catalog is not None and path.parent == folder:
        return [f"  {shown}  {size}, the catalog's {catalog.model}"]
    problem = file_problem(path)
    if problem is not None:
        return [f"  {shown}  {size}, cannot run: {problem}"]
    info = gguf_info(path)
    return [
        f"  {shown}  {size}, {info.name} ({info.architecture}, {_parameters(info.parameters)})",
        f'    keel run --model-file {path} "..."',
    ]


def _model_files_lines() -> list[str]:
    """The GGUF files in keel's models folder, and how to run any GGUF."""
    folder = models_dir()
    files = sorted(folder.rglob("*.gguf")) if folder.is_dir() else []
    lines = [f"GGUF files in {folder}:" if files else f"No GGUF files in {folder} yet."]
    for path in files:
        lines += _file_lines(path, folder)
    lines.append(
        "Any GGUF with a chat template runs the same way, in keel's model worker process (its own "
        'template, tools as for the embedded model):\n  keel run --model keel-local/<path to .gguf> "..."   (or --model-file PATH)'
    )
    return lines


def _configured_lines(config: KeelConfig) -> list[str]:
    if not config.model and config.api_base:
        return [
            f"Configured model: the one the server at {config.api_base} serves (its /v1/models)"
        ]
    if not config.model:
        return [
            f"Configured model: none, so keel runs on the default embedded model, {default_model().model}"
        ]
    own = config.for_model()
    line = f"Configured model: {config.model}"
    if own.api_base:
        line += f" at {own.api_base}"
    if is_embedded(config.model):
        try:
            name = local_model_name(config.model)
            line += (
                f" (the GGUF file {name.removeprefix('keel-local/')})"
                if file_of(config.model)
                else f" (the embedded model {name})"
            )
        except ConfigError as exc:
            line += f" ({exc})"
    details = [line]
    if own.context_window:
        details.append(f"  context window    {own.context_window:,} tokens")
    if own.tool_protocol:
        details.append(f"  tool protocol     {own.tool_protocol}")
    return details


def models_command(config: KeelConfig, cwd: Path, out: TextIO | None = None) -> int:
    """Print what `keel models` shows; always exit 0 (it only reports)."""
    out = out or sys.stdout
    keys = [f"{key} {'set' if os.environ.get(key) else 'not set'}" for key in API_KEYS]
    sections = [
        _configured_lines(config),
        _embedded_lines(),
        _model_files_lines(),
        ["API keys (read from the environment by litellm): " + ", ".join(keys)],
        [OTHER_MODELS.rstrip()],
    ]
    print("\n\n".join("\n".join(section) for section in sections), file=out)
    return ExitCode.OK
