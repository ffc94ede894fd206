"""Splitting text into words, sentences and n-grams."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
# a sentence ends at . ! or ? (and closing quotes or brackets) followed by space and a capital or digit
SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "fig",
        "no",
        "vol",
        "approx",
        "dept",
        "est",
        "inc",
        "ltd",
        "co",
    ]
)


def words(text: str, lower: bool = False) -> list[str]:
    """The words of `text` (letters and digits, inner apostrophes kept: `don't`)."""
    found = WORD.findall(text)
    return [word.lower() for word in found] if lower else found


def sentences(text: str) -> list[str]:
    """The sentences of `text`, not split after common abbreviations (`Dr.`, `e.g.`)."""
    pieces = SENTENCE_END.split(text.strip())
    merged: list[str] = []
    for piece in pieces:
        if merged and ends_with_abbreviation(merged[-1]):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return [sentence.strip() for sentence in merged if sentence.strip()]


def ends_with_abbreviation(sentence: str) -> bool:
    """Whether a sentence piece ends with an abbreviation's period rather than a full stop."""
    last = sentence.rstrip().rsplit(None, 1)[-1] if sentence.strip() else ""
    return last.endswith(".") and last[:-1].lower().strip("(") in ABBREVIATIONS


def ngrams(items: Sequence[str], size: int) -> Iterator[tuple[str, ...]]:
    """Every run of `size` consecutive items."""
    if size < 1:
        raise ValueError("n-grams have at least one item")
    for start in range(len(items) - size + 1):
        yield tuple(items[start : start + size])


def char_ngrams(text: str, size: int, pad: str = " ") -> list[str]:
    """Every run of `size` characters of `text`, padded at both ends (for fuzzy matching)."""
    padded = pad * (size - 1) + text + pad * (size - 1)
    return ["".join(gram) for gram in ngrams(list(padded), size)]


def syllables(word: str) -> int:
    """An estimate of a word's English syllables (vowel groups, a silent final e dropped), at least 1."""
    word = word.lower()
    groups = re.findall(r"[aeiouy]+", word)
    count = len(groups)
    if word.endswith("e") and not word.endswith(("le", "ee")) and count > 1:
        count -= 1
    return max(count, 1)
