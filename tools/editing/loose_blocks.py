"""The cascade's block-level last resorts, each taken only when it finds exactly one place:
stray blank lines at the edges, blank lines dropped or added, a nearly copied middle."""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from keel.tools.editing.line_keys import (
    LINE_STAGES,
    Stage,
    canonical_line,
    find_blocks,
    line_similarity,
)
from keel.tools.editing.reindent import Opcode

# How alike the lines between a matching first and last line must be (see line_similarity): most
# of them equal (one line off in a short block is a real difference), each other one very similar.
SAME_MIDDLE_LINES = 2 / 3
SIMILAR_LINE = 0.8
SIMILAR_MIDDLE = 0.9


@dataclass(frozen=True)
class Placement:
    """Where a block goes: file lines [start, start + len(old)), with old and new lines aligned
    to that span so that fit_replacement can keep every line the model left unchanged."""

    start: int
    old: list[str]
    new: list[str]
    stage: Stage
    opcodes: list[Opcode] | None = None  # how old and new align, when known (a patch's -/+ lines)

    @property
    def end(self) -> int:
        return self.start + len(self.old)


def _blank(line: str) -> bool:
    """Whether a line has nothing but whitespace."""
    return not line.strip()


def _blank_edges(lines: list[str]) -> tuple[int, int]:
    """How many blank lines lines starts and ends with (all of them count as the start)."""
    head = next((i for i, line in enumerate(lines) if not _blank(line)), len(lines))
    tail = next((i for i, line in enumerate(reversed(lines)) if not _blank(line)), 0)
    return head, tail


def without_blank_edges(old: list[str], new: list[str]) -> tuple[list[str], list[str]] | None:
    """old without the blank lines at its edges, and new without as many of its own; None when
    old has none (or is all blank)."""
    head, tail = _blank_edges(old)
    if head == len(old) or (head, tail) == (0, 0):
        return None
    new_head, new_tail = _blank_edges(new)
    cut_head, cut_tail = min(head, new_head), min(tail, new_tail)
    return old[head : len(old) - tail], new[cut_head : len(new) - cut_tail]


def _unique_block(lines: list[str], needle: list[str]) -> int | None:
    """The one place needle matches under the first stage that finds any; None if none or many."""
    for _, key in LINE_STAGES:
        found = find_blocks(lines, needle, key)
        if found:
            return found[0] if len(found) == 1 else None
    return None


def _kept_lines(old: list[str], new: list[str]) -> tuple[list[str], list[str]]:
    """old without blank lines, and new without the blank lines it keeps unchanged from old."""
    new_kept: list[str] = []
    for tag, _, _, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        run = new[j1:j2]
        new_kept.extend([line for line in run if not _blank(line)] if tag == "equal" else run)
    return [line for line in old if not _blank(line)], new_kept


def _gap_positions(old: list[str], new: list[str]) -> list[int]:
    """For each gap after old line t (t < len(old) - 1), where in new the same gap falls."""
    positions = [0] * max(len(old) - 1, 0)
    for _, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        for t in range(i1, min(i2, len(positions))):
            positions[t] = j2 if t == i2 - 1 else j1 + min(t - i1 + 1, j2 - j1)
    return positions


def _has_blank_at(lines: list[str], at: int) -> bool:
    """Whether lines has a blank line just before or at position at."""
    return any(0 <= i < len(lines) and _blank(lines[i]) for i in (at - 1, at))


def ignoring_blank_lines(lines: list[str], old: list[str], new: list[str]) -> Placement | None:
    """old found once among the file's non-blank lines, though the model dropped (or added)
    blank lines; each of the file's gaps is kept unless new has blank lines of its own there
    (old lost them but new kept them: putting the file's back too would double them)."""
    old_kept, new_kept = _kept_lines(old, new)
    if len(old_kept) < 2:
        return None
    filled = [index for index, line in enumerate(lines) if not _blank(line)]
    found = _unique_block([lines[index] for index in filled], old_kept)
    if found is None:
        return None
    span = filled[found : found + len(old_kept)]
    start, end = span[0], span[-1] + 1
    aligned_old = list(lines[start:end])
    for model_line, index in zip(old_kept, span):
        aligned_old[index - start] = model_line
    aligned_new = list(new_kept)
    positions = _gap_positions(old_kept, new_kept)
    for t in reversed(range(len(span) - 1)):
        gap = lines[span[t] + 1 : span[t + 1]]
        if gap and not _has_blank_at(new_kept, positions[t]):
            aligned_new[positions[t] : positions[t]] = gap
    return Placement(start, aligned_old, aligned_new, Stage.BLANK_LINES)


def _nearly_equal(window: list[str], wanted: list[str], keys: list[str]) -> bool:
    """Whether the file's window (keys: its canonical lines) nearly equals the wanted lines."""
    differing = [
        i for i, (key, line) in enumerate(zip(keys, wanted)) if key != canonical_line(line)
    ]
    return (
        len(wanted) - len(differing) >= SAME_MIDDLE_LINES * len(wanted)
        and all(line_similarity([window[i]], [wanted[i]]) >= SIMILAR_LINE for i in differing)
        and line_similarity(window, wanted) >= SIMILAR_MIDDLE
    )


def by_first_and_last(lines: list[str], old: list[str], new: list[str]) -> Placement | None:
    """The one window whose first and last lines match old's and whose lines between nearly do
    (most of them outright, the rest very similar: a line the model misremembered); None if there
    is not exactly one."""
    size = len(old)
    if size < 3 or not old[0].strip() or not old[-1].strip():
        return None
    first, last = canonical_line(old[0]), canonical_line(old[-1])
    keys = [canonical_line(line) for line in lines]
    windows = [
        start
        for start in range(len(lines) - size + 1)
        if keys[start] == first
        and keys[start + size - 1] == last
        and _nearly_equal(
            lines[start + 1 : start + size - 1], old[1:-1], keys[start + 1 : start + size - 1]
        )
    ]
    return Placement(windows[0], old, new, Stage.SIMILAR) if len(windows) == 1 else None
