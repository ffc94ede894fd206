"""What the server at an api_base serves: the one model it lists when no model is given, and what it says
about a model (its parameters and window), for choosing the profile and the window.

An api_base without a model means the one model the OpenAI-compatible server lists at /models: that is what
the user pointed at; another model (the embedded one) would be a silent surprise. A server that cannot be
asked, or that serves several models, is a ConfigError saying `--model`.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import urllib.error
import urllib.request

from pydantic import BaseModel

from keel.agent.core.errors import ConfigError

TIMEOUT = 10.0  # seconds; a local server answers /models at once


def served_model(api_base: str, timeout: float = TIMEOUT) -> tuple[str, str]:
    """(`openai/<id>`, the api_base to call it at) for the server's only model.

    A base URL without `/v1` (e.g. Ollama's http://127.0.0.1:11434) is also tried with it.
    """
    base = api_base.rstrip("/")
    for candidate in [base] if base.endswith("/v1") else [base, f"{base}/v1"]:
        ids = _model_ids(candidate, api_base, timeout)
        if ids is not None:
            break
    else:
        raise ConfigError(
            f"{api_base} does not list its models (no /models or /v1/models); "
            f"name the model with --model, e.g. --model openai/NAME --api-base {api_base}"
        )
    if len(ids) == 1:
        return f"openai/{ids[0]}", candidate
    if not ids:
        raise ConfigError(
            f"{api_base} serves no model yet; load one, or name it with --model openai/NAME"
        )
    shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
    raise ConfigError(
        f"{api_base} serves {len(ids)} models ({shown}); choose one with --model, "
        f"e.g. --model openai/{ids[0]}"
    )


def _model_ids(base: str, given: str, timeout: float) -> list[str] | None:
    """The model ids at `base`/models; None when the server has no such route (or answers garbage)."""
    request = urllib.request.Request(f"{base}/models", headers={"User-Agent": "keel"})
    if key := os.environ.get("OPENAI_API_KEY"):
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            listing = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 405):
            return None
        raise ConfigError(
            f"{given} answered HTTP {exc.code} when asked which model it serves; "
            "name the model with --model openai/NAME"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ConfigError(
            f"cannot reach {given} to ask which model it serves ({reason}); start the server, "
            "or name the model with --model"
        ) from None
    except ValueError:
        return None
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return None
    return [str(item["id"]) for item in data if isinstance(item, dict) and item.get("id")]


PROBE_TIMEOUT = 2.0  # seconds; asking is a courtesy, never worth a slow start
_SIZE_TEXT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMBT])\s*$", re.IGNORECASE)
_UNITS = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


class ServedModel(BaseModel):
    """What the server running a model says about it: its parameters and the window it serves (None where it
    does not say), and which route said it."""

    params: int | None = None
    window: int | None = None
    source: str = ""

    @property
    def billions(self) -> float | None:
        return None if self.params is None else self.params / 1e9


_ANSWERS: dict[tuple[str, str], ServedModel] = {}  # what servers said, by (model, api_base)


def describe_served(
    model: str, api_base: str | None, timeout: float = PROBE_TIMEOUT
) -> ServedModel:
    """What the model's server says about it, asked once per process (an answer is kept): llama.cpp's
    `/v1/models` gives `meta.n_params` and its `/props` the window it serves, vLLM's `/v1/models` gives
    `max_model_len`, Ollama's `/api/show` the parameter size. A server that says nothing, answers badly or not
    at all gives an empty description, never an error (and is asked again next time)."""
    base = api_base or ("http://127.0.0.1:11434" if _is_ollama(model) else None)
    if base is None:
        return ServedModel()
    key = (model, base.rstrip("/"))
    if key not in _ANSWERS:
        described = _described(*key, timeout)
        if described.source:
            _ANSWERS[key] = described
        return described
    return _ANSWERS[key]


def _described(model: str, base: str, timeout: float) -> ServedModel:
    name = model.split("/", 1)[1] if "/" in model else model
    if _is_ollama(model):
        return _ollama(name, base, timeout)
    listing = _get_json(f"{base}/models", timeout) or {}
    data = listing.get("data") if isinstance(listing, dict) else None
    entries = [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []
    entry = next((item for item in entries if item.get("id") == name), None)
    if entry is None and len(entries) == 1:  # llama.cpp serves one model under any name
        entry = entries[0]
    if entry is None:
        return ServedModel()
    meta = entry.get("meta")
    params = _positive(meta.get("n_params")) if isinstance(meta, dict) else None
    window = _positive(entry.get("max_model_len"))
    if isinstance(
        meta, dict
    ):  # llama.cpp's server: the window it serves is in /props, not n_ctx_train
        window = _llama_cpp_window(base, timeout)
    if params is None and window is None:
        return ServedModel()
    return ServedModel(params=params, window=window, source=f"{base}/models")


def _llama_cpp_window(base: str, timeout: float) -> int | None:
    """The context a llama.cpp server gives each request: `/props`' `default_generation_settings.n_ctx`."""
    props = _get_json(f"{base.removesuffix('/v1')}/props", timeout)
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    return _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None


def _ollama(name: str, base: str, timeout: float) -> ServedModel:
    """Ollama's `/api/show`: `details.parameter_size` ("1.5B"); its `*.context_length` is what the model was
    trained for, not what Ollama serves (num_ctx), so the window is left to the config."""
    root = base.removesuffix("/v1")
    shown = _get_json(f"{root}/api/show", timeout, {"model": name})
    details = shown.get("details") if isinstance(shown, dict) else None
    size = details.get("parameter_size") if isinstance(details, dict) else None
    found = _SIZE_TEXT.match(size) if isinstance(size, str) else None
    if found is None:
        return ServedModel()
    params = int(float(found[1]) * _UNITS[found[2].upper()])
    return ServedModel(params=params, source=f"{root}/api/show")


def _is_ollama(model: str) -> bool:
    return model.startswith(("ollama/", "ollama_chat/"))


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _get_json(url: str, timeout: float, body: dict[str, str] | None = None) -> object:
    """The JSON at `url` (POSTing `body` when given); None for any failure."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"User-Agent": "keel"})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if key := os.environ.get("OPENAI_API_KEY"):
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except (
        OSError,
        ValueError,
        http.client.HTTPException,
    ):  # URLError, HTTPError, timeouts are OSErrors
        return None
