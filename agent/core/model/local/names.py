"""The embedded models' names alone: a front end shows them before pydantic or llama.cpp load.

Which models there are, and what each `keel-local/...` name means, is keel.agent.core.model.local.catalog's.
"""

from __future__ import annotations

PROVIDER = "keel-local"
LIGHT_NAME = "qwen2.5-coder-0.5b-instruct"  # the light choice, for small machines
CAPABLE_NAME = "qwen2.5-coder-1.5b-instruct"  # the default: the one that can do the work


def is_embedded(model: str) -> bool:
    """True for a `keel-local/...` name: one of the embedded models or a GGUF file, run in keel's worker (an
    unknown name or a bad file is a ConfigError later)."""
    return model.startswith(f"{PROVIDER}/")


def file_of(model: str) -> str | None:
    """The path a `keel-local/<path to .gguf>` name gives (absolute, relative or `~`), None for a catalog
    name: a path ends in `.gguf` or has a `/`, `~` or `.` in it where a catalog name cannot."""
    if not is_embedded(model):
        return None
    rest = model[len(PROVIDER) + 1 :].strip()
    if rest.lower().endswith(".gguf") or "/" in rest or rest.startswith(("~", ".")):
        return rest
    return None
