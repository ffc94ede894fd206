"""How edits find their place: exact first, then ever more forgiving, never silently ambiguous."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import Enum

from keel.tools.editing.reindent import fit_replacement

REGION_SHOWN_LINES = 30

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


class MatchError(ValueError):
    """The text to replace was not found, or found in several places; str() is for the model."""


class Stage(str, Enum):
    """How forgiving the comparison that found a match was."""

    EXACT = "exact"
    TRAILING_WHITESPACE = "trailing whitespace ignored"
    INDENTATION = "indentation ignored"
    UNICODE = "unicode punctuation and spacing normalized"

    @property
    def reindents(self) -> bool:
        return self in (Stage.INDENTATION, Stage.UNICODE)


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


@dataclass(frozen=True)
class Edit:
    """A replacement: the new text, how the match was found, and where (1-based lines)."""

    text: str
    stage: Stage
    lines: list[int]


@dataclass(frozen=True)
class Region:
    """A stretch of lines [start, end) (0-based) and how similar it is to what was looked for."""

    start: int
    end: int
    similarity: float


def split_lines(text: str) -> list[str]:
    """Lines of "\\n"-form text; a final newline does not make an extra empty line."""
    if not text:
        return []
    return text.removesuffix("\n").split("\n")


def find_all(text: str, needle: str) -> list[int]:
    """Offsets of the non-overlapping occurrences of needle in text."""
    found, at = [], text.find(needle)
    while at != -1:
        found.append(at)
        at = text.find(needle, at + len(needle))
    return found


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


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _refuse_ambiguity(places: list[int], stage: Stage) -> None:
    how = "" if stage is Stage.EXACT else f" (with {stage.value})"
    shown = ", ".join(str(n) for n in places[:20]) + (", ..." if len(places) > 20 else "")
    raise MatchError(
        f"old_string matches {len(places)} places{how}, at lines {shown}. "
        "Include more surrounding lines in old_string to pick one place, "
        "or set replace_all=true to change every one."
    )


def _replace_spans(text: str, starts: list[int], length: int, new: str) -> str:
    pieces, last = [], 0
    for start in starts:
        pieces.append(text[last:start])
        pieces.append(new)
        last = start + length
    pieces.append(text[last:])
    return "".join(pieces)


def _substring_edit(
    text: str, starts: list[int], length: int, new: str, stage: Stage, replace_all: bool
) -> Edit:
    lines = [_line_of(text, s) for s in starts]
    if len(starts) > 1 and not replace_all:
        _refuse_ambiguity(lines, stage)
    return Edit(_replace_spans(text, starts, length, new), stage, lines)


def _line_edit(
    text: str,
    old_lines: list[str],
    new_lines: list[str],
    starts: list[int],
    stage: Stage,
    replace_all: bool,
) -> Edit:
    """Whole lines replaced, the replacement fitted to the file (see fit_replacement)."""
    if len(starts) > 1 and not replace_all:
        _refuse_ambiguity([s + 1 for s in starts], stage)
    lines = split_lines(text)
    for start in reversed(starts):
        end = start + len(old_lines)
        lines[start:end] = fit_replacement(old_lines, new_lines, lines[start:end], stage.reindents)
    result = "\n".join(lines)
    if text.endswith("\n") and lines:
        result += "\n"
    return Edit(result, stage, [s + 1 for s in starts])


_READ_PREFIX = re.compile(r"^ *\d+\t")


def strip_line_numbers(text: str) -> str | None:
    """text without read_file's "   12<TAB>" prefixes, if every line has one; else None."""
    lines = text.split("\n")
    if not all(_READ_PREFIX.match(line) for line in lines if line):
        return None
    return "\n".join(_READ_PREFIX.sub("", line, count=1) for line in lines)


def replace_text(text: str, old: str, new: str, replace_all: bool = False) -> Edit:
    """Replace old with new in text (all "\\n"-form) by the match cascade; MatchError when it can't.

    Stages: exact substring; whole lines ignoring trailing whitespace; ignoring indentation (new
    re-indented to the file's); unicode punctuation normalized (substring, then whole lines).
    Copied read_file line-number prefixes are dropped as a last resort.
    """
    if not old:
        raise MatchError("old_string is empty; give the exact text to replace")
    starts = find_all(text, old)
    if starts:
        return _substring_edit(text, starts, len(old), new, Stage.EXACT, replace_all)
    old_lines, new_lines = split_lines(old), split_lines(new)
    lines = split_lines(text)
    for stage, key in LINE_STAGES:
        if stage is Stage.UNICODE:
            starts = find_all(normalize_unicode(text), normalize_unicode(old))
            if starts:
                return _substring_edit(text, starts, len(old), new, stage, replace_all)
        found = find_blocks(lines, old_lines, key)
        if found:
            return _line_edit(text, old_lines, new_lines, found, stage, replace_all)
    unnumbered = strip_line_numbers(old)
    if unnumbered is not None and unnumbered != old:
        return replace_text(text, unnumbered, strip_line_numbers(new) or new, replace_all)
    raise MatchError(describe_no_match(lines, old_lines, "old_string"))


_WORD = re.compile(r"\w+")


def _line_scores(lines: list[str], needle: list[str]) -> list[float]:
    """How much each line looks like part of needle: shared words, rarer ones weighing more."""
    wanted = {word for line in needle for word in _WORD.findall(normalize_unicode(line))}
    if not wanted:
        stripped = {line.strip() for line in needle}
        return [1.0 if line.strip() in stripped else 0.0 for line in lines]
    words = [[w for w in _WORD.findall(normalize_unicode(line)) if w in wanted] for line in lines]
    frequency = Counter(word for line_words in words for word in line_words)
    return [sum(1.0 / frequency[word] for word in line_words) for line_words in words]


def _diagonal_votes(lines: list[str], needle: list[str], size: int) -> dict[int, float]:
    """Window starts voted for by needle lines found verbatim (modulo indentation) in the file."""
    positions: dict[str, list[int]] = {}
    for index, line in enumerate(lines):
        positions.setdefault(line.strip(), []).append(index)
    votes: defaultdict[int, float] = defaultdict(float)
    for offset, line in enumerate(needle):
        hits = positions.get(line.strip(), []) if line.strip() else []
        for index in hits:
            start = index - offset
            if 0 <= start <= len(lines) - size:
                votes[start] += 1.0 / len(hits)
    return votes


def _top(scored: list[tuple[float, int]], count: int) -> list[int]:
    return [
        start
        for score, start in sorted(scored, key=lambda item: (-item[0], item[1]))[:count]
        if score > 0
    ]


def closest_region(lines: list[str], needle: list[str], candidates: int = 8) -> Region | None:
    """The window of len(needle) lines most like needle.

    Candidates come from lines found verbatim (voting for where the block would start) and from
    shared words (rarer words weigh more); line-by-line difflib ratios pick the best of them.
    """
    if not lines or not needle:
        return None
    size = min(len(needle), len(lines))
    line_scores = _line_scores(lines, needle)
    window = sum(line_scores[:size])
    word_windows = [(window, 0)]
    for start in range(1, len(lines) - size + 1):
        window += line_scores[start + size - 1] - line_scores[start - 1]
        word_windows.append((window, start))
    votes = _diagonal_votes(lines, needle, size)
    starts = set(_top(word_windows, candidates)) | set(
        _top([(v, s) for s, v in votes.items()], candidates)
    )
    best = Region(0, size, 0.0)
    for start in sorted(starts):
        similarity = _similarity(lines[start : start + size], needle[:size])
        if similarity > best.similarity:
            best = Region(start, start + size, similarity)
    return best


def _similarity(window: list[str], needle: list[str]) -> float:
    """Line by line difflib ratios, weighted by line length (fast even for long blocks)."""
    total = weight_sum = 0.0
    for have, want in zip(window, needle):
        have, want = have.strip()[:300], want.strip()[:300]
        weight = max(len(have), len(want), 1)
        ratio = 1.0 if have == want else SequenceMatcher(None, have, want).ratio()
        total += ratio * weight
        weight_sum += weight
    return total / weight_sum if weight_sum else 0.0


def numbered(lines: list[str], first_number: int) -> str:
    """Lines as read_file shows them: right-aligned number, tab, text."""
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, first_number))


def describe_no_match(lines: list[str], needle: list[str], what: str) -> str:
    """A message for the model: no match, the closest region with line numbers, and what differs."""
    region = closest_region(lines, needle)
    if region is None:
        return f"No match for {what}: " + ("the file is empty." if not lines else "it is empty.")
    if region.similarity < 0.3:
        return (
            f"No match for {what}, and nothing in the file resembles it; "
            "read the file again to see its current content."
        )
    shown = lines[region.start : region.end]
    # whitespace and punctuation differences are forgiven, so the first real one is what to fix
    differing = next(
        (
            index
            for index, (want, have) in enumerate(zip(needle, shown))
            if canonical_line(want) != canonical_line(have)
        ),
        None,
    )
    first = max(0, (differing or 0) - 10) if len(shown) > REGION_SHOWN_LINES else 0
    last = min(len(shown), first + REGION_SHOWN_LINES)
    listing = ("   ...\n" if first else "") + numbered(shown[first:last], region.start + first + 1)
    listing += "\n   ..." if last < len(shown) else ""
    message = (
        f"No match for {what}. The closest region is lines {region.start + 1}-{region.end} "
        f"({region.similarity:.0%} similar):\n{listing}\n"
    )
    if differing is not None:
        message += (
            f"First difference: line {differing + 1} of {what} vs line "
            f"{region.start + differing + 1} of the file:\n"
            f"  expected: {needle[differing].rstrip()}\n  actual:   {shown[differing].rstrip()}\n"
        )
    else:
        message += f"{what} has {len(needle)} lines but the file only {len(lines)}.\n"
    return message + f"Copy {what} exactly from the file (without line numbers) and try again."
