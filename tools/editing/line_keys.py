"""Lines as the match cascade compares them: each stage's key, block search, similarity."""

from __future__ import annotations

from collections.abc import Callable
from difflib import SequenceMatcher
from enum import Enum

# What models and word processors swap for plain ASCII; one character for one, so offsets survive.
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys(
            "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
            "\u202f\u205f\u3000",
            " ",
        ),
    }
)


class Stage(str, Enum):
    """How forgiving the comparison that found a match was."""

    EXACT = "exact"
    TRAILING_WHITESPACE = "trailing whitespace ignored"
    INDENTATION = "indentation ignored"
    UNICODE = "unicode punctuation and spacing normalized"
    BLANK_LINES = "blank lines ignored"
    SIMILAR = "only the first and last lines matched exactly, the lines between nearly"
    UNESCAPED = "backslash escapes read as the characters they stand for"

    @property
    def reindents(self) -> bool:
        return self in (Stage.INDENTATION, Stage.UNICODE, Stage.BLANK_LINES, Stage.SIMILAR)


def normalize_unicode(text: str) -> str:
    """Curly quotes, dashes and odd spaces as ASCII, character for character (offsets unchanged)."""
    return text if text.isascii() else text.translate(_PUNCTUATION)


def canonical_line(line: str) -> str:
    """A line as the most forgiving stage sees it: ASCII punctuation, single spaces."""
    if not line.isascii():
        line = normalize_unicode(line).replace("\u2026", "...").replace("\u200b", "")
    return " ".join(line.split())


LINE_STAGES: list[tuple[Stage, Callable[[str], str]]] = [
    (Stage.EXACT, lambda line: line),
    (Stage.TRAILING_WHITESPACE, str.rstrip),
    (Stage.INDENTATION, str.strip),
    (Stage.UNICODE, canonical_line),
]


def split_lines(text: str) -> list[str]:
    """Lines of "\\n"-form text; a final newline does not make an extra empty line."""
    if not text:
        return []
    return text.removesuffix("\n").split("\n")


def find_blocks(
    lines: list[str], needle: list[str], key: Callable[[str], str], start: int = 0
) -> list[int]:
    """Starts of the non-overlapping runs of lines equal to needle under `key`, from `start`."""
    if not needle:
        return []
    keyed = [key(line) for line in lines]
    wanted = [key(line) for line in needle]
    found, i, size = [], start, len(wanted)
    while i + size <= len(keyed):
        if keyed[i] == wanted[0] and keyed[i : i + size] == wanted:
            found.append(i)
            i += size
        else:
            i += 1
    return found


def block_matches_at(lines: list[str], needle: list[str], at: int) -> Stage | None:
    """The first stage under which needle equals the lines starting at `at`, if any."""
    window = lines[at : at + len(needle)]
    if at < 0 or len(window) != len(needle):
        return None
    for stage, key in LINE_STAGES:
        if [key(line) for line in window] == [key(line) for line in needle]:
            return stage
    return None


def locate_block(
    lines: list[str], needle: list[str], start: int = 0
) -> tuple[list[int], Stage] | None:
    """All places (from `start`) where needle matches under the first stage that finds any."""
    for stage, key in LINE_STAGES:
        found = find_blocks(lines, needle, key, start)
        if found:
            return found, stage
    return None


def line_similarity(window: list[str], needle: list[str]) -> float:
    """Line by line difflib ratios, weighted by line length (fast even for long blocks)."""
    total = weight_sum = 0.0
    for have, want in zip(window, needle):
        have, want = have.strip()[:300], want.strip()[:300]
        weight = max(len(have), len(want), 1)
        ratio = 1.0 if have == want else SequenceMatcher(None, have, want).ratio()
        total += ratio * weight
        weight_sum += weight
    return total / weight_sum if weight_sum else 0.0
