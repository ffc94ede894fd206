"""The small-model profile: which models get the compact prompt, fewer tools, no bare status line, a low
temperature and a reply limit, because a 0.5B–3B model copies what it does not need, drifts at a server's default
sampling and may write until its window is full."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from pydantic import BaseModel

from keel.agent.core.config import PromptProfile
from keel.agent.core.model.local.names import file_of, is_embedded
from keel.agent.core.model.prices import context_window
from keel.agent.core.model.served_model import ServedModel

SMALL_MODEL_MAX_BILLIONS = 4.0
SMALL_WINDOW = 8_192  # a model made with a window this small is a small model, whatever its name
LOCAL_TEMPERATURE = 0.2
# a served small model's reply limit: room for a few small files in full; llama.cpp's server sets none
LOCAL_REPLY_TOKENS = 2_048
# "1.5b", "7B", "0.5b" in a model name; "a3b" (a mixture's active share) counts too, the largest wins
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)[bB](?![a-zA-Z0-9])")


class ModelProfile(BaseModel):
    """How a session talks to its model, beyond where the model is."""

    compact: bool = False
    temperature: float | None = None
    reply_tokens: int | None = None  # max_tokens of every call that names none of its own
    parallel_calls: bool = False
    reason: str = ""  # why this profile, for session.started
    chosen: bool = False  # said by hand (--profile, `prompt`): keel does not move it

    def sampling(self) -> dict[str, float | int]:
        """What the profile adds to every request's body."""
        extra: dict[str, float | int] = {}
        if self.temperature is not None:
            extra["temperature"] = self.temperature
        if self.reply_tokens is not None:
            extra["max_tokens"] = self.reply_tokens
        return extra


def parameters_in_billions(model: str) -> float | None:
    """The model's size as its name states it ("qwen2.5-coder-1.5b-instruct" → 1.5), if it does."""
    sizes = [float(found) for found in _SIZE.findall(model.rsplit("/", 1)[-1])]
    return max(sizes) if sizes else None


def gguf_billions(model: str) -> float | None:
    """The size of the GGUF file a `keel-local/<path>` name gives, from its header (None if unreadable)."""
    from keel.agent.core.model.local.gguf_file import NotGguf, gguf_info
    from keel.agent.core.model.local.model_file import resolve_file

    text = file_of(model)
    if text is None:
        return None
    try:
        return gguf_info(resolve_file(text)).billions
    except (OSError, NotGguf):
        return None


def is_small_model(model: str, served: ServedModel | None = None) -> bool:
    """Small by its stated size, its server's count or the window it was made with (small_because)."""
    return small_because(model, served) is not None


def small_because(model: str, served: ServedModel | None = None) -> str | None:
    """Why the model is small, or None: the catalog's embedded models always are, a GGUF file by the parameters
    its header counts; a served one by the parameters its server reports, else the size its name states, else
    a window of 8k or less in the model map."""
    if is_embedded(model):
        size = gguf_billions(model)
        if size is None:
            return "an embedded model"
        return (
            f"its GGUF header counts {size:.1f}B parameters"
            if size <= SMALL_MODEL_MAX_BILLIONS
            else None
        )
    if served is not None and served.billions is not None:
        size = served.billions
        said = f"its server ({served.source}) reports {size:.1f}B parameters"
        return said if size <= SMALL_MODEL_MAX_BILLIONS else None
    size = parameters_in_billions(model)
    if size is not None:
        return f"its name says {size:g}B" if size <= SMALL_MODEL_MAX_BILLIONS else None
    known = context_window(model)
    if known is not None and known <= SMALL_WINDOW:
        return f"its window is {known} tokens"
    return None


def is_local(model: str, api_base: str | None) -> bool:
    """The model runs on this machine or the local network: embedded, or served from a private address."""
    if is_embedded(model):
        return True
    host = urlsplit(api_base or "").hostname
    if not host:
        return False
    if host == "localhost" or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private


def small_sampling(
    model: str, api_base: str | None, temperature: float | None
) -> tuple[float | None, int | None]:
    """The temperature and reply limit of a small model: served locally, a low temperature unless one is set and
    LOCAL_REPLY_TOKENS; elsewhere (the embedded models have their own limit) the temperature as set, no limit."""
    if not is_local(model, api_base) or is_embedded(model):
        return temperature, None
    return (LOCAL_TEMPERATURE if temperature is None else temperature), LOCAL_REPLY_TOKENS


def model_profile(
    model: str,
    api_base: str | None,
    prompt: PromptProfile | None,
    temperature: float | None,
    parallel_calls: bool | None,
    served: ServedModel | None = None,
) -> ModelProfile:
    """The configured choices over the automatic ones: `prompt = "compact"` or "full" (`--profile small|full`)
    decides; "auto" (or unset) makes small models compact. A compact model served locally gets a low
    temperature unless one is set, and a reply limit; the embedded models decode greedily unless one is set
    (KEEL_LOCAL_TEMPERATURE) and have a limit of their own (engine.DEFAULT_MAX_REPLY_TOKENS)."""
    if prompt in ("compact", "full"):
        compact, reason = prompt == "compact", "chosen by --profile or the config's `prompt`"
    else:
        because = small_because(model, served)
        compact = because is not None
        reason = because or "not known to be a small model"
    temperature, reply_tokens = (
        small_sampling(model, api_base, temperature) if compact else (temperature, None)
    )
    return ModelProfile(
        compact=compact,
        temperature=temperature,
        reply_tokens=reply_tokens,
        parallel_calls=bool(parallel_calls),
        reason=reason,
        chosen=prompt in ("compact", "full"),
    )
