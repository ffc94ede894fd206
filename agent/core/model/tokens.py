"""Token counting: tiktoken's o200k encoding from litellm's offline copy, each text counted once."""

from __future__ import annotations

import importlib.util
import json
import os
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from keel.agent.core.messages import Message

MESSAGE_OVERHEAD = 4  # role and separators, as chat formats add them
IMAGE_TOKENS = 1_000  # an image as providers bill it, roughly (a 1024×1024 one is ~765 for OpenAI, ~1,400 for Anthropic)


def use_bundled_tiktoken_files() -> None:
    """Point tiktoken at the encodings litellm ships, so nothing is downloaded (litellm is not imported)."""
    spec = importlib.util.find_spec("litellm")
    if spec and spec.submodule_search_locations:
        directory = (
            Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
        )
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(directory))


def load_encoding() -> None:
    """Load the encoding now rather than at the first count."""
    _encoding()


@cache
def _encoding() -> Any:
    use_bundled_tiktoken_files()
    import tiktoken

    try:
        return tiktoken.get_encoding("o200k_base")
    except Exception:  # noqa: BLE001 - no encoding offline (tiktoken's download error): use the estimate
        return None


def count_text(text: str) -> int:
    if not text:
        return 0
    encoding = _encoding()
    if encoding is None:
        return len(text) // 4 + 1
    return len(encoding.encode(text, disallowed_special=()))


def count_message(message: Message) -> int:
    """Tokens of one message, cached on it: a message is counted once in its life."""
    cached = message.token_count
    if cached is None:
        cached = MESSAGE_OVERHEAD + count_text(message.content) + IMAGE_TOKENS * len(message.images)
        for call in message.tool_calls:
            cached += count_text(call.name) + count_text(call.arguments) + MESSAGE_OVERHEAD
        message.token_count = cached
    return cached


# fewer bytes per token than almost any text has (code ~3.5, prose ~4.5): rough counts run high
ROUGH_BYTES_PER_TOKEN = 2


def rough_count(text: str) -> int:
    """A text's tokens at a glance, from its UTF-8 size: high for most texts, and no tokenizer pass."""
    if not text:
        return 0
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return size // ROUGH_BYTES_PER_TOKEN + 1


def rough_count_message(message: Message) -> int:
    """`count_message` at a glance (rough_count): for a ledger that is far from every limit."""
    rough = MESSAGE_OVERHEAD + rough_count(message.content) + IMAGE_TOKENS * len(message.images)
    for call in message.tool_calls:
        rough += rough_count(call.name) + rough_count(call.arguments) + MESSAGE_OVERHEAD
    return rough


def count_json(value: Any) -> int:
    return count_shared_text(json.dumps(value, separators=(",", ":")))


@lru_cache(maxsize=16)
def count_shared_text(text: str) -> int:
    """`count_text` of a text every session sends alike (tool schemas, a system prompt): counted once per
    process, not once per session."""
    return count_text(text)
