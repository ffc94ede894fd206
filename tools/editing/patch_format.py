"""The `*** Begin Patch` multi-file patch format: a tolerant parser and hunk application (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from keel.tools.editing.closest import describe_no_match
from keel.tools.editing.line_keys import (
    LINE_STAGES,
    Stage,
    block_matches_at,
    find_blocks,
    locate_block,
    split_lines,
)
from keel.tools.editing.loose_blocks import Placement, by_first_and_last, ignoring_blank_lines
from keel.tools.editing.reindent import Opcode, fit_with_sources

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = "*** Add File:", "*** Delete File:", "*** Update File:", "*** Move to:"
END_OF_FILE = "*** End of File"
_SECTION_STARTS = (ADD, DELETE, UPDATE, END)
_INDENTED_SECTION_STARTS = (ADD, DELETE, UPDATE)  # an indented End Patch may be a context line
_UNIFIED_HEADER = re.compile(r"^@@\s*-\d+(?:,\d+)?\s+\+\d+(?:,\d+)?\s*@@\s?(.*)$")
_HEREDOC_OPENER = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?\s*$")

FORMAT_HINT = (
    "The format is:\n*** Begin Patch\n*** Update File: path\n@@ optional line above the change\n"
    " context line\n-removed line\n+added line\n*** End Patch\n"
    "(also *** Add File: path with every line prefixed +, *** Delete File: path, *** Move to: path)"
)


class PatchError(ValueError):
    """The patch can't be read or applied; str() tells the model what to fix."""


@dataclass
class Hunk:
    """One `@@` section: optional anchor lines to find first, then context/removed/added lines."""

    anchors: list[str] = field(default_factory=list)
    old_lines: list[str] = field(default_factory=list)
    new_lines: list[str] = field(default_factory=list)
    at_end_of_file: bool = False
    # each line's prefix (' ', '-' or '+') as the patch gave it; "" if not known
    kinds: str = field(default="", compare=False)

    @property
    def title(self) -> str:
        return f"@@ {self.anchors[-1]}" if self.anchors else "@@"


@dataclass
class AddFile:
    path: str
    content: str


@dataclass
class DeleteFile:
    path: str


@dataclass
class UpdateFile:
    path: str
    move_to: str | None = None
    hunks: list[Hunk] = field(default_factory=list)


FileOp = AddFile | DeleteFile | UpdateFile


@dataclass
class HunksApplied:
    """A file's new text after its hunks, and the forgiving stages some hunks needed."""

    text: str
    stages: list[Stage]
    sources: list[int | None] = field(default_factory=list)  # per line: see apply_hunks


def unwrap(text: str) -> tuple[list[str], int]:
    """The patch's lines without the wrappers models add (``` fences, a heredoc, prose before
    `*** Begin Patch`, anything after `*** End Patch`), and the line number of the first one."""
    lines = text.replace("\r\n", "\n").split("\n")
    first = 1
    while lines and not lines[0].strip():
        lines, first = lines[1:], first + 1
    for _ in range(3):
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        if lines and lines[0].strip().startswith("```"):
            lines, first = (lines[1:-1] if lines[-1].strip() == "```" else lines[1:]), first + 1
        elif lines and (opener := _HEREDOC_OPENER.search(lines[0])):
            tag = opener.group(1)
            lines, first = (lines[1:-1] if lines[-1].strip() == tag else lines[1:]), first + 1
    begin = _marker_index(lines, BEGIN)
    if begin is not None:
        lines, first = lines[begin + 1 :], first + begin + 1
    elif not (lines and _is_section_start(lines[0])):
        raise PatchError(f"the patch must start with '{BEGIN}'. {FORMAT_HINT}")
    end = _marker_index(lines, END)
    return (lines if end is None else lines[:end]), first


def _is_marker(line: str, marker: str) -> bool:
    """Whether the line is a whole-line marker, maybe with spaces around it (as Codex allows)."""
    return line.strip() == marker


def _marker_index(lines: list[str], marker: str) -> int | None:
    """Where a whole-line marker is: the first one at column 0, else the first indented one."""
    flush = next((i for i, line in enumerate(lines) if line.rstrip() == marker), None)
    if flush is not None:
        return flush
    return next((i for i, line in enumerate(lines) if _is_marker(line, marker)), None)


def _path_after(line: str, directive: str, number: int) -> str:
    path = line[len(directive) :].strip()
    if not path:
        raise PatchError(f"patch line {number}: '{directive}' needs a path after it")
    return path


def _is_section_start(line: str) -> bool:
    """Whether the line opens a file's section (maybe indented) or is an End Patch at column 0."""
    return line.startswith(_SECTION_STARTS) or line.lstrip().startswith(_INDENTED_SECTION_STARTS)


def _drop_trailing_blanks(body: list[str]) -> list[str]:
    while body and body[-1] == "":
        body = body[:-1]
    return body


def _parse_add(path: str, body: list[str], first_number: int) -> AddFile:
    content = []
    for number, line in enumerate(_drop_trailing_blanks(body), first_number):
        if line.startswith("+"):
            content.append(line[1:])
        elif _is_marker(line, END_OF_FILE):
            continue
        elif line.strip() == "":
            content.append("")
        else:
            raise PatchError(
                f"patch line {number}: in '{ADD} {path}' every line must start with '+', "
                f"got {line!r}"
            )
    return AddFile(path, "".join(line + "\n" for line in content))


def _anchor_of(line: str) -> str:
    unified = _UNIFIED_HEADER.match(line)
    anchor = unified.group(1) if unified else line[2:]
    anchor = anchor.strip()
    return anchor[:-2].rstrip() if anchor.endswith("@@") else anchor


def _parse_hunks(path: str, body: list[str], first_number: int) -> list[Hunk]:
    hunks: list[Hunk] = []
    current: Hunk | None = None
    for number, line in enumerate(_drop_trailing_blanks(body), first_number):
        if line.startswith("@@"):
            anchor = _anchor_of(line)
            if current is None or current.old_lines or current.new_lines:
                current = Hunk()
                hunks.append(current)
            if anchor:
                current.anchors.append(anchor)
            continue
        if _is_marker(line, END_OF_FILE):
            if current is None:
                raise PatchError(f"patch line {number}: '{END_OF_FILE}' before any hunk of {path}")
            current.at_end_of_file = True
            continue
        if line.startswith("***"):
            raise PatchError(f"patch line {number}: unknown directive {line!r}. {FORMAT_HINT}")
        if line.startswith("\\ No newline") or (
            current is None and line.startswith(("--- ", "+++ "))
        ):
            continue  # unified-diff furniture
        if current is None:
            current = Hunk()
            hunks.append(current)
        kind, text = (line[0], line[1:]) if line[:1] in (" ", "-", "+") else (" ", line)
        current.kinds += kind
        if kind in " -":
            current.old_lines.append(text)
        if kind in " +":
            current.new_lines.append(text)
    for index, hunk in enumerate(hunks, 1):
        if not hunk.old_lines and not hunk.new_lines:
            raise PatchError(f"hunk {index} of '{UPDATE} {path}' has no lines")
    return hunks


def parse_patch(text: str) -> list[FileOp]:
    """The file operations in a patch, in order; PatchError (with a line number) if unreadable."""
    lines, first_number = unwrap(text)
    ops: list[FileOp] = []
    i = 0
    while i < len(lines):
        line, number = lines[i], i + first_number
        if not line.strip():
            i += 1
            continue
        if not _is_section_start(line):
            raise PatchError(
                f"patch line {number}: expected '{ADD}', '{DELETE}' or '{UPDATE}', "
                f"got {line!r}. {FORMAT_HINT}"
            )
        end = next((j for j in range(i + 1, len(lines)) if _is_section_start(lines[j])), len(lines))
        body = lines[i + 1 : end]
        line = line.lstrip()
        if line.startswith(ADD):
            ops.append(_parse_add(_path_after(line, ADD, number), body, number + 1))
        elif line.startswith(DELETE):
            ops.append(DeleteFile(_path_after(line, DELETE, number)))
        elif line.startswith(UPDATE):
            update = UpdateFile(_path_after(line, UPDATE, number))
            first = number + 1
            if body and body[0].lstrip().startswith(MOVE):
                update.move_to = _path_after(body[0].lstrip(), MOVE, first)
                body, first = body[1:], first + 1
            update.hunks = _parse_hunks(update.path, body, first)
            if not update.hunks and not update.move_to:
                raise PatchError(f"patch line {number}: '{UPDATE} {update.path}' has no hunks")
            ops.append(update)
        i = end
    if not ops:
        raise PatchError(f"the patch contains no file operations. {FORMAT_HINT}")
    return ops


def opcodes_of(kinds: str) -> list[Opcode] | None:
    """difflib-style opcodes aligning a hunk's old and new lines as its -/+ prefixes say."""
    if not kinds:
        return None
    ops: list[Opcode] = []
    i = j = at = 0
    while at < len(kinds):
        end = at + 1
        if kinds[at] == " ":
            while end < len(kinds) and kinds[end] == " ":
                end += 1
            ops.append(("equal", i, i + end - at, j, j + end - at))
            i, j, at = i + end - at, j + end - at, end
            continue
        while end < len(kinds) and kinds[end] != " ":
            end += 1
        removed, added = kinds.count("-", at, end), kinds.count("+", at, end)
        tag = "replace" if removed and added else "delete" if removed else "insert"
        ops.append((tag, i, i + removed, j, j + added))
        i, j, at = i + removed, j + added, end
    return ops


def _trimmed_variants(hunk: Hunk) -> list[tuple[list[str], list[str], str]]:
    """The hunk's lines (and -/+ prefixes), then without blank context lines at its edges (often
    a model's padding); the prefixes are "" where the trimming does not follow them."""
    variants = [(hunk.old_lines, hunk.new_lines, hunk.kinds)]
    old, new, kinds = list(hunk.old_lines), list(hunk.new_lines), hunk.kinds
    while len(old) > 1 and old[-1].strip() == "" and new and new[-1].strip() == "":
        old, new = old[:-1], new[:-1]
        kinds = kinds[:-1] if kinds.endswith(" ") else ""
    while len(old) > 1 and old[0].strip() == "" and new and new[0].strip() == "":
        old, new = old[1:], new[1:]
        kinds = kinds[1:] if kinds.startswith(" ") else ""
    if old != hunk.old_lines:
        variants.append((old, new, kinds))
    return variants


def _find_anchor(lines: list[str], anchor: str, start: int) -> int | None:
    for _, key in LINE_STAGES:
        wanted = key(anchor)
        for index in range(start, len(lines)):
            if key(lines[index]) == wanted:
                return index
    return None


def _locate(lines: list[str], hunk: Hunk, cursor: int) -> Placement | None:
    """A hunk's place: at the end if it says so, else the first match after the cursor, else
    (hunks given out of order) a unique match anywhere, else a unique match once blank lines are
    ignored or with a nearly equal middle."""
    for old, new, kinds in _trimmed_variants(hunk):
        opcodes = opcodes_of(kinds)
        if hunk.at_end_of_file:
            stage = block_matches_at(lines, old, len(lines) - len(old))
            if stage:
                return Placement(len(lines) - len(old), old, new, stage, opcodes)
        located = locate_block(lines, old, cursor)
        if located:
            return Placement(located[0][0], old, new, located[1], opcodes)
        for stage, key in LINE_STAGES:
            found = find_blocks(lines, old, key)
            if len(found) == 1:
                return Placement(found[0], old, new, stage, opcodes)
            if found:
                break
    old, new, _ = _trimmed_variants(hunk)[-1]
    for step in (ignoring_blank_lines, by_first_and_last):
        place = step(lines, old, new)
        if place:
            return place
    return None


def apply_hunks(text: str, hunks: list[Hunk], path: str) -> HunksApplied:
    """Apply an Update File's hunks to "\\n"-form text; PatchError naming a failing hunk.

    The result's sources say, for each of its lines, which line of text it takes its line ending
    from (None: the file's usual one), so that a mixed-endings file keeps each line's own.
    """
    lines = split_lines(text)
    cursor = 0
    replacements: list[tuple[int, int, list[str], list[int | None]]] = []
    stages: list[Stage] = []
    for number, hunk in enumerate(hunks, 1):
        where = f"{UPDATE} {path}, hunk {number} of {len(hunks)} ({hunk.title})"
        for anchor in hunk.anchors:
            found = _find_anchor(lines, anchor, cursor)
            if found is None:
                after = f" after line {cursor}" if cursor else ""
                raise PatchError(
                    f"{where}: its @@ line was not found{after}. "
                    + describe_no_match(lines, [anchor], "the @@ line")
                )
            cursor = found + 1
        if not hunk.old_lines:
            at = cursor if hunk.anchors else len(lines)
            above = at - 1 if at else None
            replacements.append((at, at, hunk.new_lines, [above] * len(hunk.new_lines)))
            continue
        place = _locate(lines, hunk, cursor)
        if place is None:
            raise PatchError(
                f"{where}: "
                + describe_no_match(lines, hunk.old_lines, "the hunk's context and removed lines")
            )
        start, end = place.start, place.end
        if any(
            start < other_end and other_start < end for other_start, other_end, _, _ in replacements
        ):
            raise PatchError(
                f"{where} overlaps an earlier hunk (lines {start + 1}-{end}); "
                "merge the two hunks into one"
            )
        fitted, taken_from = fit_with_sources(
            place.old, place.new, lines[start:end], place.stage.reindents, place.opcodes
        )
        sources = [start + i if start + i >= 0 else None for i in taken_from]
        replacements.append((start, end, fitted, sources))
        stages.append(place.stage)
        cursor = end
    all_sources: list[int | None] = list(range(len(lines)))
    for start, end, new_lines, sources in sorted(
        replacements, key=lambda r: (r[0], r[1]), reverse=True
    ):
        lines[start:end] = new_lines
        all_sources[start:end] = sources
    result = "\n".join(lines)
    if lines and (text.endswith("\n") or not text):
        result += "\n"
    return HunksApplied(result, [s for s in stages if s is not Stage.EXACT], all_sources)
