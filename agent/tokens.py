"""Token counting: tiktoken's o200k encoding from litellm's offline copy, each text counted once."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from agent.messages import Message

MESSAGE_OVERHEAD = 4  # role and separators, as chat formats add them


@cache
def _encoding() -> Any:
    from agent.model import litellm_module

    litellm_module()  # points TIKTOKEN_CACHE_DIR at litellm's bundled encodings (no download)
    import tiktoken

    try:
        return tiktoken.get_encoding("o200k_base")
    except Exception:  # no encoding available offline: fall back to the character estimate
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
        cached = MESSAGE_OVERHEAD + count_text(message.content)
        for call in message.tool_calls:
            cached += count_text(call.name) + count_text(call.arguments) + MESSAGE_OVERHEAD
        message.token_count = cached
    return cached


def count_json(value: Any) -> int:
    return count_text(json.dumps(value, separators=(",", ":")))
