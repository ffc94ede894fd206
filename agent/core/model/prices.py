"""Model prices and context windows from litellm's bundled map, read as JSON without importing litellm."""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

from keel.agent.core.protocol import TokenUsage

MAP_FILE = "model_prices_and_context_window_backup.json"


@cache
def _price_map() -> dict[str, dict[str, Any]]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    try:
        with open(Path(next(iter(spec.submodule_search_locations))) / MAP_FILE, "rb") as file:
            prices: dict[str, dict[str, Any]] = json.load(file)
    except (OSError, ValueError):
        return {}
    return prices


def model_info(model: str) -> dict[str, Any] | None:
    """The map's entry for a model name as litellm spells it, with or without its provider prefix."""
    entries = _price_map()
    found = entries.get(model)
    if found is None and "/" in model:
        found = entries.get(model.split("/", 1)[1])
    return found if isinstance(found, dict) else None


def context_window(model: str) -> int | None:
    info = model_info(model)
    if info is None:
        return None
    tokens = info.get("max_input_tokens") or info.get("max_tokens")
    return int(tokens) if tokens else None


def cost_of(model: str, usage: TokenUsage) -> float | None:
    """What the call cost in dollars, or None for a model the map does not price (local servers)."""
    info = model_info(model)
    if info is None or "input_cost_per_token" not in info:
        return None
    prompt_rate = float(info["input_cost_per_token"])
    cached_rate = float(info.get("cache_read_input_token_cost") or prompt_rate)
    completion_rate = float(info.get("output_cost_per_token") or 0.0)
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    return (
        (usage.prompt_tokens - cached) * prompt_rate
        + cached * cached_rate
        + usage.completion_tokens * completion_rate
    )
