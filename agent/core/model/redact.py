"""Secrets out of logs and model requests: values of secret-named variables and known key shapes."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from keel.agent.core.model.request_cache import LastRequestCache

if TYPE_CHECKING:
    from keel.agent.core.model.client import ChatModel, ModelReply
    from keel.agent.core.model.sampling import CallSampling

SECRET_NAME = re.compile(r"(_KEY|_TOKEN|_SECRET|PASSWORD|_PASS|_CREDENTIALS?)$", re.IGNORECASE)
KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{30,})"
)
# a key shape can only be present where one of these literal prefixes is: `in` finds them far
# faster than the pattern's search, so text without any of them skips the pattern
KEY_PREFIXES = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "xox", "AIza")
MASK = "[REDACTED]"
MIN_SECRET_LENGTH = 6
MIN_ENCODED_LENGTH = 12  # shorter pieces of an encoding would match ordinary text


def encodings(value: str) -> set[str]:
    """The base64 (standard and URL-safe) and hex spellings of a secret, as they appear in longer output.

    Base64 of text that holds the secret at any offset shows one of three runs of characters that
    depend on the secret alone: those runs are what is masked.
    """
    raw = value.encode()
    found = {raw.hex(), raw.hex().upper()}
    for offset in range(3):
        text = base64.b64encode(bytes(offset) + raw).decode().rstrip("=")
        first = -(-8 * offset // 6)  # the first character made of the secret's bits alone
        last = (8 * (offset + len(raw))) // 6  # one past the last such character
        run = text[first:last]
        found |= {run, run.replace("+", "-").replace("/", "_")}
    return {spelling for spelling in found if len(spelling) >= MIN_ENCODED_LENGTH}


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


@dataclass(frozen=True)
class Redactor:
    """Replaces known secret values and key-shaped strings with a mask."""

    values: tuple[str, ...] = ()

    @classmethod
    def from_environment(
        cls, env: Mapping[str, str] | None = None, extra: Iterable[str] = ()
    ) -> Redactor:
        env = os.environ if env is None else env
        found = {v for k, v in env.items() if is_secret_name(k) and len(v) >= MIN_SECRET_LENGTH}
        found.update(v for v in extra if len(v) >= MIN_SECRET_LENGTH)
        found |= {spelling for value in list(found) for spelling in encodings(value)}
        # longest first, so a secret containing another is masked whole
        return cls(tuple(sorted(found, key=len, reverse=True)))

    def redact(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, MASK)
        if any(map(text.__contains__, KEY_PREFIXES)):
            text = KEY_SHAPES.sub(MASK, text)
        return text


def secrets_in_url(url: str | None) -> list[str]:
    """A URL's password and its query values (gateways keyed in the URL): secrets a config may hold."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.password or ""] + [value for _, value in parse_qsl(parts.query)]
    except ValueError:
        return []
    return [value for value in found if len(value) >= MIN_SECRET_LENGTH]


def _redact_message(message: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    clean = dict(message)
    if isinstance(clean.get("content"), str):
        clean["content"] = redact(clean["content"])
    elif isinstance(
        clean.get("content"), list
    ):  # content parts (a message with images): their text
        clean["content"] = [
            {**part, "text": redact(part["text"])} if isinstance(part.get("text"), str) else part
            for part in clean["content"]
        ]
    if clean.get("tool_calls"):
        clean["tool_calls"] = [
            {
                **call,
                "function": {
                    **call["function"],
                    "arguments": redact(call["function"].get("arguments") or ""),
                },
            }
            if isinstance(call.get("function"), dict)
            else call
            for call in clean["tool_calls"]
        ]
    return clean


class RedactingModel:
    """A ChatModel whose requests never carry a known secret, whatever the history holds."""

    def __init__(self, inner: ChatModel, redactor: Redactor) -> None:
        self.inner = inner
        self.redactor = redactor
        self._clean: dict[
            str, str
        ] = {}  # the history repeats every call: each text is scanned once
        # each message is redacted once, and its clean copy is the same object on every call
        self._clean_messages = LastRequestCache(
            lambda message: _redact_message(message, self._redact)
        )

    def _redact(self, text: str) -> str:
        clean = self._clean.get(text)
        if clean is None:
            if len(self._clean) > 20_000:
                self._clean.clear()
            clean = self._clean[text] = self.redactor.redact(text)
        return clean

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: Callable[[str], None],
        max_tokens: int | None = None,
        sampling: CallSampling | None = None,
    ) -> ModelReply:
        return await self.inner.complete(
            self._clean_messages.map(messages), tools, on_delta, max_tokens, sampling
        )

    async def aclose(self) -> None:
        """Close the inner model's connections, when it holds any."""
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
