"""What a scripted server says about its model, in the shape of a real server's: the `/v1/models` listing of
llama.cpp's server (`meta.n_params`; its `/props` has the window it serves), of vLLM (`max_model_len`) or a plain OpenAI-compatible one, and Ollama's
`/api/show` (`details.parameter_size`, `model_info.*.context_length`), so keel's probing is tested against them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

ServerShape = Literal["openai", "llama.cpp", "vllm", "ollama"]


def models_listing(
    shape: ServerShape, names: Sequence[str], params: int | None, window: int | None
) -> dict[str, Any]:
    """GET /v1/models as a server of this shape answers it."""
    models: list[dict[str, Any]] = []
    for name in names:
        entry: dict[str, Any] = {
            "id": name,
            "object": "model",
            "created": 0,
            "owned_by": "keel-tests",
        }
        if shape == "llama.cpp":
            entry["owned_by"] = "llamacpp"
            entry["meta"] = {
                "vocab_type": 2,
                "n_vocab": 151936,
                "n_ctx_train": 32768,
                "n_embd": 1536,
                "n_params": params,
                "size": (params or 0) // 2,
            }
        elif shape == "vllm":
            entry.update(owned_by="vllm", root=name, parent=None, max_model_len=window)
        models.append(entry)
    return {"object": "list", "data": models}


def ollama_show(name: str, params: int | None, window: int | None) -> dict[str, Any]:
    """POST /api/show {"model": name} as Ollama answers it: the size as text, the window in model_info."""
    size = f"{params / 1e9:.1f}B" if params else ""
    return {
        "modelfile": f"FROM {name}",
        "details": {"format": "gguf", "family": "qwen2", "parameter_size": size},
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": window or 32768},
    }


def llama_cpp_props(window: int | None) -> dict[str, Any]:
    """GET /props of llama.cpp's server: the context each request gets (`-c`, per slot)."""
    return {
        "default_generation_settings": {"n_ctx": window or 32768, "params": {"n_predict": -1}},
        "total_slots": 1,
        "model_path": "/models/model.gguf",
    }
