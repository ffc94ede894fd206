"""An api_base given without a model: use the one model the OpenAI-compatible server lists at /models.

That is what the user pointed at; another model (the embedded one) would be a silent surprise. A server
that cannot be asked, or that serves several models, is a ConfigError saying `--model`.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

from keel.agent.errors import ConfigError

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
