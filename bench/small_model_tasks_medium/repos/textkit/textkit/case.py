"""Identifier and title case conversions: snake_case, camelCase, PascalCase, kebab-case, Title Case."""

from __future__ import annotations

import re

# an acronym before a capitalised word (HTTPServer -> HTTP Server), a lower/digit before an upper
BOUNDARY = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])|(?<=[a-z0-9])(?=[A-Z])")
SEPARATORS = re.compile(r"[\s_\-.]+")
SMALL_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "as",
        "at",
        "but",
        "by",
        "en",
        "for",
        "if",
        "in",
        "nor",
        "of",
        "on",
        "or",
        "per",
        "the",
        "to",
        "v",
        "vs",
        "via",
        "with",
    ]
)


def words(text: str) -> list[str]:
    """The words of an identifier or phrase: `HTTPServerError` -> [HTTP, Server, Error]."""
    spaced = BOUNDARY.sub(" ", text)
    return [word for word in SEPARATORS.split(spaced) if word]


def to_snake(text: str) -> str:
    """snake_case: `HTTPServerError` -> `http_server_error`."""
    return "_".join(word.lower() for word in words(text))


def to_kebab(text: str) -> str:
    """kebab-case: `HTTPServerError` -> `http-server-error`."""
    return "-".join(word.lower() for word in words(text))


def to_constant(text: str) -> str:
    """CONSTANT_CASE: `maxRetries` -> `MAX_RETRIES`."""
    return "_".join(word.upper() for word in words(text))


def to_pascal(text: str) -> str:
    """PascalCase: `http_server_error` -> `HttpServerError`."""
    return "".join(word[:1].upper() + word[1:].lower() for word in words(text))


def to_camel(text: str) -> str:
    """camelCase: `http_server_error` -> `httpServerError`."""
    pascal = to_pascal(text)
    return pascal[:1].lower() + pascal[1:]


def to_title(text: str) -> str:
    """Title Case for headlines: small words lower case except first and last, words already in
    capitals (acronyms) kept as they are."""
    parts = text.split()
    titled = []
    for index, word in enumerate(parts):
        if word.isupper() and len(word) > 1:
            titled.append(word)
        elif 0 < index < len(parts) - 1 and word.lower() in SMALL_WORDS:
            titled.append(word.lower())
        else:
            titled.append(word[:1].upper() + word[1:].lower())
    return " ".join(titled)


def swap_case_style(text: str, style: str) -> str:
    """`text` in the named style: snake, kebab, constant, pascal, camel or title."""
    converters = {
        "snake": to_snake,
        "kebab": to_kebab,
        "constant": to_constant,
        "pascal": to_pascal,
        "camel": to_camel,
        "title": to_title,
    }
    try:
        return converters[style](text)
    except KeyError:
        raise ValueError(f"unknown style {style!r}; choose from {', '.join(converters)}") from None
