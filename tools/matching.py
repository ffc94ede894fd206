"""How edits find their place: exact first, then ever more forgiving comparisons, never silently ambiguous."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import Enum

TAB_WIDTH = 4
REGION_SHOWN_LINES = 30

# Characters models and word processors swap for plain ASCII; one character for one, so offsets survive.
_PUNCTUATION = str.maketrans({
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                    "\u202f\u205f\u3000", " "),
})


class MatchError(ValueError):
    """The text to replace was not found, or found in more than one place; str() is for the model."""


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
    """Curly quotes, dashes and odd spaces as ASCII, character for character (offsets are unchanged)."""
    return text.translate(_PUNCTUATION)


def canonical_line(line: str) -> str:
    """A line reduced to what matters at the most forgiving stage: ASCII punctuation, single spaces."""
    line = normalize_unicode(line).replace("\u2026", "...").replace("\u200b", "").replace("\ufeff", "")
    return " ".join(line.split())


LINE_STAGES: list[tuple[Stage, Callable[[str], str]]] = [
    (Stage.EXACT, lambda line: line),
    (Stage.TRAILING_WHITESPACE, str.rstrip),
    (Stage.INDENTATION, str.strip),
    (Stage.UNICODE, canonical_line),
]


@dataclass(frozen=True)
class Edit:
    """The result of replacing text: the new text, how the match was found, and where (1-based lines)."""

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


def find_blocks(lines: list[str], needle: list[str], key: Callable[[str], str], start: int = 0) -> list[int]:
    """Start indexes of the non-overlapping runs of lines equal to needle under `key`, from `start`."""
    if not needle:
        return []
    keyed = [key(line) for line in lines]
    wanted = [key(line) for line in needle]
    found, i, size = [], start, len(wanted)
    while i + size <= len(keyed):
        if keyed[i] == wanted[0] and keyed[i:i + size] == wanted:
            found.append(i)
            i += size
        else:
            i += 1
    return found


def block_matches_at(lines: list[str], needle: list[str], at: int) -> Stage | None:
    """The first stage under which needle equals the lines starting at `at`, if any."""
    window = lines[at:at + len(needle)]
    if at < 0 or len(window) != len(needle):
        return None
    for stage, key in LINE_STAGES:
        if [key(line) for line in window] == [key(line) for line in needle]:
            return stage
    return None


def locate_block(lines: list[str], needle: list[str], start: int = 0) -> tuple[list[int], Stage] | None:
    """All places (from `start`) where needle matches under the first stage that finds any."""
    for stage, key in LINE_STAGES:
        found = find_blocks(lines, needle, key, start)
        if found:
            return found, stage
    return None


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _columns(indent: str) -> int:
    return sum(TAB_WIDTH if char == "\t" else 1 for char in indent)


class Reindenter:
    """Maps the model's indentation onto the file's, learned from the lines that matched."""

    def __init__(self, model_lines: list[str], file_lines: list[str], new_lines: list[str]) -> None:
        pairs = [(_indent(m), _indent(f)) for m, f in zip(model_lines, file_lines)
                 if m.strip() and f.strip()]
        self.known = {}
        for model_indent, file_indent in pairs:
            self.known.setdefault(model_indent, file_indent)
        self.use_tabs = any(f.startswith("\t") for _, f in pairs)
        points = sorted({(_columns(m), _columns(f)) for m, f in pairs})
        if len({m for m, _ in points}) >= 2:
            (m0, f0), (m1, f1) = points[0], points[-1]
            self.scale = (f1 - f0) / (m1 - m0)
        else:
            self.scale = 1.0
            if self.use_tabs:
                widths = [_columns(_indent(line)) for line in model_lines + new_lines if line.strip()]
                unit = math.gcd(*widths) if any(widths) else TAB_WIDTH
                self.scale = TAB_WIDTH / unit if unit else 1.0
        m0, f0 = points[0] if points else (0, 0)
        self.offset = f0 - self.scale * m0

    def apply(self, line: str) -> str:
        if not line.strip():
            return ""
        model_indent = _indent(line)
        body = line[len(model_indent):]
        if model_indent in self.known:
            return self.known[model_indent] + body
        columns = max(0, round(self.scale * _columns(model_indent) + self.offset))
        if self.use_tabs:
            return "\t" * (columns // TAB_WIDTH) + " " * (columns % TAB_WIDTH) + body
        return " " * columns + body


def fit_replacement(old_lines: list[str], new_lines: list[str], file_lines: list[str],
                    reindent: bool) -> list[str]:
    """new_lines as they should go into the file in place of file_lines (which matched old_lines).

    Lines the model left unchanged keep the file's exact text; changed lines are re-indented to the
    file's indentation when the match ignored indentation.
    """
    indenter = Reindenter(old_lines, file_lines, new_lines) if reindent else None
    result: list[str] = []
    opcodes = SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            result.extend(file_lines[i1:i2])
        elif indenter:
            result.extend(indenter.apply(line) for line in new_lines[j1:j2])
        else:
            result.extend(new_lines[j1:j2])
    return result


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


def _substring_edit(text: str, starts: list[int], length: int, new: str, stage: Stage,
                    replace_all: bool) -> Edit:
    lines = [_line_of(text, s) for s in starts]
    if len(starts) > 1 and not replace_all:
        _refuse_ambiguity(lines, stage)
    return Edit(_replace_spans(text, starts, length, new), stage, lines)


def _line_edit(text: str, old_lines: list[str], new_lines: list[str], starts: list[int],
               stage: Stage, replace_all: bool) -> Edit:
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


_TOKEN = re.compile(r"\w+|[^\w\s]")


def _tokens(line: str) -> list[str]:
    return _TOKEN.findall(canonical_line(line))


def closest_region(lines: list[str], needle: list[str], candidates: int = 8) -> Region | None:
    """The window of len(needle) lines most like needle: ranked by shared tokens, then by difflib."""
    if not lines or not needle:
        return None
    size = min(len(needle), len(lines))
    wanted = Counter(token for line in needle for token in _tokens(line))
    line_tokens = [Counter(_tokens(line)) for line in lines]
    window: Counter[str] = Counter()
    for counts in line_tokens[:size]:
        window.update(counts)
    scores = []
    for start in range(len(lines) - size + 1):
        if start:
            window.subtract(line_tokens[start - 1])
            window.update(line_tokens[start + size - 1])
        scores.append((sum(min(window[t], n) for t, n in wanted.items()), -start))
    best_starts = [-neg for _, neg in sorted(scores, reverse=True)[:candidates]]
    target = "\n".join(line.strip() for line in needle)
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    best: Region | None = None
    for start in sorted(best_starts):
        matcher.set_seq1("\n".join(line.strip() for line in lines[start:start + size]))
        ratio = matcher.ratio()
        if best is None or ratio > best.similarity:
            best = Region(start, start + size, ratio)
    return best


def numbered(lines: list[str], first_number: int) -> str:
    """Lines as read_file shows them: right-aligned number, tab, text."""
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, first_number))


def _difference(what: str, expected: str, actual: str, line_number: int, index: int) -> str:
    head = f"First difference: line {index + 1} of {what} vs line {line_number} of the file"
    if expected.strip() == actual.strip():
        return f"{head}: only leading/trailing whitespace differs: {expected!r} vs {actual!r}\n"
    if canonical_line(expected) == canonical_line(actual):
        return f"{head}: only spacing or punctuation characters differ: {expected!r} vs {actual!r}\n"
    return f"{head}:\n  expected: {expected.rstrip()}\n  actual:   {actual.rstrip()}\n"


def describe_no_match(lines: list[str], needle: list[str], what: str) -> str:
    """A message for the model: not found, the closest region with line numbers, and what differs."""
    region = closest_region(lines, needle)
    if region is None:
        return f"{what} was not found: the file is empty" if not lines else f"{what} is empty"
    if region.similarity < 0.3:
        return (f"{what} was not found, and nothing in the file resembles it; "
                "read the file again to see its current content")
    shown = lines[region.start:region.end]
    cut = len(shown) > REGION_SHOWN_LINES
    listing = numbered(shown[:REGION_SHOWN_LINES], region.start + 1) + ("\n   ..." if cut else "")
    message = (f"{what} was not found. The closest region is lines {region.start + 1}-{region.end} "
               f"({region.similarity:.0%} similar):\n{listing}\n")
    for index, (expected, actual) in enumerate(zip(needle, shown)):
        if expected != actual:
            message += _difference(what, expected, actual, region.start + index + 1, index)
            break
    else:
        message += (f"{what} has {len(needle)} lines but the file only {len(lines)}.\n")
    return message + f"Copy {what} exactly from the file (without line numbers) and try again."
