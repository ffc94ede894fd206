"""What to tell the model when nothing matches: the closest region and its first difference."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from keel.tools.editing.line_keys import canonical_line, line_similarity, normalize_unicode

REGION_SHOWN_LINES = 30


@dataclass(frozen=True)
class Region:
    """A stretch of lines [start, end) (0-based) and how similar it is to what was looked for."""

    start: int
    end: int
    similarity: float


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
        similarity = line_similarity(lines[start : start + size], needle[:size])
        if similarity > best.similarity:
            best = Region(start, start + size, similarity)
    return best


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
