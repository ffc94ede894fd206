"""Secrets out of logs and model requests: values of secret-named variables and known key shapes."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SECRET_NAME = re.compile(r"(_KEY|_TOKEN|_SECRET|PASSWORD|_PASS|_CREDENTIALS?)$", re.IGNORECASE)
KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{30,})"
)
MASK = "[REDACTED]"
MIN_SECRET_LENGTH = 6


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
        # longest first, so a secret containing another is masked whole
        return cls(tuple(sorted(found, key=len, reverse=True)))

    def redact(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, MASK)
        return KEY_SHAPES.sub(MASK, text)
