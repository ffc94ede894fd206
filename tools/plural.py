"""`plural(1, "line")` -> "1 line", `plural(2, "match")` -> "2 matches": counts in text people and models read."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """The count and the word, in the plural unless the count is exactly 1."""
    if count == 1:
        return f"{count:,} {word}"
    if many is None:
        many = f"{word}es" if word.endswith(("ch", "sh", "s", "x")) else f"{word}s"
    return f"{count:,} {many}"
