"""How edits find their place: exact first, then ever more forgiving, never silently ambiguous."""

from __future__ import annotations

import re
from dataclasses import dataclass

from keel.tools.editing.closest import describe_no_match
from keel.tools.editing.line_keys import (
    LINE_STAGES,
    Stage,
    find_blocks,
    locate_block,
    normalize_unicode,
    split_lines,
)
from keel.tools.editing.loose_blocks import (
    Placement,
    by_first_and_last,
    ignoring_blank_lines,
    without_blank_edges,
)
from keel.tools.editing.reindent import fit_replacement


class MatchError(ValueError):
    """The text to replace was not found, or found in several places; str() is for the model."""


@dataclass(frozen=True)
class Edit:
    """A replacement: the new text, how the match was found, and where (1-based lines)."""

    text: str
    stage: Stage
    lines: list[int]


def find_all(text: str, needle: str) -> list[int]:
    """Offsets of the non-overlapping occurrences of needle in text."""
    found, at = [], text.find(needle)
    while at != -1:
        found.append(at)
        at = text.find(needle, at + len(needle))
    return found


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


def _line_edit(text: str, lines: list[str], places: list[Placement], replace_all: bool) -> Edit:
    """Whole lines replaced at each place, the replacement fitted to the file (fit_replacement)."""
    if len(places) > 1 and not replace_all:
        _refuse_ambiguity([place.start + 1 for place in places], places[0].stage)
    lines = list(lines)
    for place in reversed(places):
        lines[place.start : place.end] = fit_replacement(
            place.old, place.new, lines[place.start : place.end], place.stage.reindents
        )
    result = "\n".join(lines)
    if text.endswith("\n") and lines:
        result += "\n"
    return Edit(result, places[0].stage, [place.start + 1 for place in places])


_READ_PREFIX = re.compile(r"^ *\d+\t")


def strip_line_numbers(text: str) -> str | None:
    """text without read_file's "   12<TAB>" prefixes, if every line has one; else None."""
    lines = text.split("\n")
    if not all(_READ_PREFIX.match(line) for line in lines if line):
        return None
    return "\n".join(_READ_PREFIX.sub("", line, count=1) for line in lines)


_ESCAPES = re.compile(r"\\(.)", re.DOTALL)
_ESCAPED = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"', "`": "`", "$": "$"}


def unescape(text: str) -> str:
    """text with the backslash escapes a model may send literally (\\n, \\t, \\', \\", \\`, \\$,
    \\\\) read as the characters they stand for; other backslashes stay."""
    return _ESCAPES.sub(lambda m: _ESCAPED.get(m.group(1), m.group(0)), text)


def _whole_lines_edit(
    text: str, lines: list[str], old: str, new: str, replace_all: bool
) -> Edit | None:
    """The line-by-line stages, then blank lines at old's edges dropped, then blank lines ignored."""
    old_lines, new_lines = split_lines(old), split_lines(new)
    for stage, key in LINE_STAGES:
        if stage is Stage.UNICODE:
            starts = find_all(normalize_unicode(text), normalize_unicode(old))
            if starts:
                return _substring_edit(text, starts, len(old), new, stage, replace_all)
        found = find_blocks(lines, old_lines, key)
        if found:
            places = [Placement(start, old_lines, new_lines, stage) for start in found]
            return _line_edit(text, lines, places, replace_all)
    old_lines, new_lines = without_blank_edges(old_lines, new_lines) or (old_lines, new_lines)
    located = locate_block(lines, old_lines)
    if located:
        places = [Placement(start, old_lines, new_lines, located[1]) for start in located[0]]
        return _line_edit(text, lines, places, replace_all)
    place = ignoring_blank_lines(lines, old_lines, new_lines)
    return _line_edit(text, lines, [place], replace_all) if place else None


def _find_edit(text: str, old: str, new: str, replace_all: bool, nearly: bool) -> Edit | None:
    """The edit found by the cascade's equal-text steps, or (nearly) by a nearly equal middle."""
    lines = split_lines(text)
    if nearly:
        old_lines, new_lines = split_lines(old), split_lines(new)
        old_lines, new_lines = without_blank_edges(old_lines, new_lines) or (old_lines, new_lines)
        place = by_first_and_last(lines, old_lines, new_lines)
        return _line_edit(text, lines, [place], replace_all) if place else None
    starts = find_all(text, old)
    if starts:
        return _substring_edit(text, starts, len(old), new, Stage.EXACT, replace_all)
    return _whole_lines_edit(text, lines, old, new, replace_all)


@dataclass(frozen=True)
class _Reading:
    """One way to read what the model sent: as sent, without line numbers, unescaped."""

    old: str
    new: str
    unescaped: bool = False

    def edit(self, text: str, replace_all: bool, nearly: bool) -> Edit | None:
        if not self.unescaped:
            return _find_edit(text, self.old, self.new, replace_all, nearly)
        try:  # taken only where it finds exactly one place
            edit = _find_edit(text, self.old, self.new, False, nearly)
        except MatchError:
            return None
        return Edit(edit.text, Stage.UNESCAPED, edit.lines) if edit else None


def _readings(old: str, new: str) -> list[_Reading]:
    readings = [_Reading(old, new)]
    unnumbered = strip_line_numbers(old)
    if unnumbered is not None and unnumbered != old:
        readings.append(_Reading(unnumbered, strip_line_numbers(new) or new))
    plain = unescape(readings[-1].old)
    if plain != readings[-1].old:
        readings.append(_Reading(plain, unescape(readings[-1].new), unescaped=True))
    return readings


def replace_text(text: str, old: str, new: str, replace_all: bool = False) -> Edit:
    """Replace old with new in text (all "\\n"-form) by the match cascade; MatchError when it can't.

    Stages: exact substring; whole lines ignoring trailing whitespace; ignoring indentation (new
    re-indented to the file's); unicode punctuation normalized (substring, then whole lines);
    blank lines at old's edges dropped; blank lines ignored (only where that finds one place).
    old is read as sent, then without copied read_file line numbers, then with its backslash
    escapes read as what they stand for (only where that finds one place). Last, each reading may
    match by its first and last lines with a nearly equal middle (only where that finds one place).
    """
    if not old:
        raise MatchError("old_string is empty; give the exact text to replace")
    readings = _readings(old, new)
    for nearly in (False, True):
        for reading in readings:
            edit = reading.edit(text, replace_all, nearly)
            if edit:
                return edit
    shown = next(reading.old for reading in reversed(readings) if not reading.unescaped)
    raise MatchError(describe_no_match(split_lines(text), split_lines(shown), "old_string"))
