"""Markdown with YAML front matter, as Claude Code's agent files are written: the small YAML subset they use.

Scalars (`key: value`, quoted or not), inline lists (`[a, b]`), block lists (`- a` lines) and block scalars
(`|`, `>`) are read; anything else is kept as text. No YAML library is needed for that subset.
"""

from __future__ import annotations

import json
import re

FrontMatterValue = str | list[str]

_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(.*)$")


class FrontMatterError(ValueError):
    """The file opens a front matter block it never closes."""


def split_front_matter(text: str) -> tuple[dict[str, FrontMatterValue], str]:
    """The front matter's keys and the body after it; a file without front matter is all body."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        raise FrontMatterError("the front matter opened by '---' on the first line is never closed")
    return parse_block(lines[1:end]), "\n".join(lines[end + 1 :]).strip("\n")


def parse_block(lines: list[str]) -> dict[str, FrontMatterValue]:
    """`key: value` pairs; a key's indented or `- ` lines after it belong to it."""
    result: dict[str, FrontMatterValue] = {}
    index = 0
    while index < len(lines):
        match = _KEY.match(lines[index])
        index += 1
        if match is None:
            continue  # comments, blank lines, and what this subset does not read
        key, rest = match.group(1), match.group(2).strip()
        nested: list[str] = []
        while index < len(lines) and (
            not lines[index].strip() or lines[index][:1] in (" ", "\t", "-")
        ):
            nested.append(lines[index])
            index += 1
        result[key] = _value(rest, nested)
    return result


def _value(rest: str, nested: list[str]) -> FrontMatterValue:
    """One key's value from the rest of its line and the lines under it."""
    if rest in ("|", ">", "|-", ">-", "|+", ">+"):
        block = [line.strip() for line in nested]
        joined = "\n".join(block) if rest.startswith("|") else " ".join(b for b in block if b)
        return joined.strip()
    if rest.startswith("[") and rest.endswith("]"):
        return [_scalar(item) for item in _split_inline(rest[1:-1]) if item.strip()]
    items = [line.strip()[1:].strip() for line in nested if line.strip().startswith("-")]
    if not rest and items:
        return [_scalar(item) for item in items]
    continued = " ".join(line.strip() for line in nested if line.strip())
    return _scalar(f"{rest} {continued}".strip() if continued else rest)


def _split_inline(text: str) -> list[str]:
    """`a, "b, c", d` into its items, commas inside quotes kept."""
    items, current, quote = [], "", ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == ",":
            items.append(current)
            current = ""
            continue
        current += char
    return [*items, current]


def _scalar(text: str) -> str:
    """A plain, single- or double-quoted scalar as its text (a trailing `# comment` dropped)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            return str(json.loads(text))
        except json.JSONDecodeError:
            return text[1:-1]
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return re.sub(r"\s+#.*$", "", text)
