"""The one way keel builds a llama_cpp.Llama (worker, test probes, benches): on a build with AMX kernels the
model loads without llama.cpp's extra weight buffers, whose AMX path crashes on the first decode."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

EXTRA_BUFFERS_SETTING = "KEEL_LOCAL_EXTRA_BUFFERS"


def extra_buffers_wanted(system_info: str, setting: str | None) -> bool:
    """Whether llama.cpp may put the weights in its extra buffer types (repacked for faster kernels).

    Yes, unless this build of llama.cpp has AMX kernels: on Xeons with AMX a natively built llama.cpp puts the
    weights in its AMX buffer and crashes (SIGSEGV in `ldtilecfg`) on the first decode, and without extra
    buffers that path is never reached. Elsewhere they stay on: repacked weights read prompts several times
    faster (bench/local_model.py). KEEL_LOCAL_EXTRA_BUFFERS=0 or 1 (`setting`) decides instead.
    """
    if setting in ("0", "1"):
        return setting == "1"
    return "AMX_INT8 = 1" not in system_info


def system_info(llama_cpp: Any) -> str:
    """llama.cpp's own description of its build (which kernels it has)."""
    return str(llama_cpp.llama_print_system_info().decode("utf-8", "replace"))


@contextmanager
def model_params_without_extra_buffers(llama_cpp: Any) -> Iterator[None]:
    """While a Llama is built, its model parameters come with `use_extra_bufts` off (Llama() has no flag)."""
    native = llama_cpp.llama_cpp
    original = native.llama_model_default_params

    def defaults() -> Any:
        params = original()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    native.llama_model_default_params = defaults
    try:
        yield
    finally:
        native.llama_model_default_params = original


def build_llama(llama_cpp: Any, **params: Any) -> tuple[Any, bool]:
    """llama_cpp.Llama(**params), loaded the AMX-safe way; with whether extra weight buffers were used."""
    extra_buffers = extra_buffers_wanted(
        system_info(llama_cpp), os.environ.get(EXTRA_BUFFERS_SETTING)
    )
    guard = nullcontext() if extra_buffers else model_params_without_extra_buffers(llama_cpp)
    with guard:
        return llama_cpp.Llama(**params), extra_buffers
