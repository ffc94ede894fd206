"""Fitting a replacement into a file: unchanged lines keep the file's exact text, changed lines
take the file's indentation (tabs stay tabs) when the match ignored indentation, keeping the
nesting the file has even where the model flattened it."""

from __future__ import annotations

import math
from collections.abc import Iterable
from difflib import SequenceMatcher
from itertools import chain

TAB_WIDTH = 4


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _columns(indent: str) -> int:
    return sum(TAB_WIDTH if char == "\t" else 1 for char in indent)


def _unit(indents: Iterable[str]) -> int:
    """The indentation step (in columns) that every given indentation is a multiple of; 0 if none."""
    return math.gcd(*(_columns(indent) for indent in indents))


class Reindenter:
    """Maps the model's indentation onto the file's, learned from the lines that matched."""

    def __init__(self, model_lines: list[str], file_lines: list[str], new_lines: list[str]) -> None:
        pairs = [
            (_indent(m), _indent(f))
            for m, f in zip(model_lines, file_lines)
            if m.strip() and f.strip()
        ]
        self.known: dict[str, str] = {}
        for model_indent, file_indent in pairs:
            self.known.setdefault(model_indent, file_indent)
        # one model indentation standing for several of the file's: the model flattened nesting
        self.flattened = any(self.known[m] != f for m, f in pairs)
        self.model_lines, self.file_lines = model_lines, file_lines
        self.use_tabs = any(f.startswith("\t") for _, f in pairs)
        points = sorted({(_columns(m), _columns(f)) for m, f in pairs})
        if len({m for m, _ in points}) >= 2 and not self.flattened:
            (m0, f0), (m1, f1) = points[0], points[-1]
            self.scale = (f1 - f0) / (m1 - m0)
        elif self.use_tabs or self.flattened:
            model_unit = _unit(_indent(line) for line in model_lines + new_lines if line.strip())
            file_unit = TAB_WIDTH if self.use_tabs else _unit(f for _, f in pairs)
            self.scale = file_unit / model_unit if model_unit and file_unit else 1.0
        else:
            self.scale = 1.0
        m0, f0 = points[0] if points else (0, 0)
        self.offset = f0 - self.scale * m0

    def apply(self, line: str, stands_for: int | None) -> str:
        """line re-indented; stands_for is the old line it replaces or sits beside, if any."""
        if not line.strip():
            return ""
        model_indent = _indent(line)
        body = line[len(model_indent) :]
        anchor = self._anchor(stands_for) if self.flattened else None
        if anchor is not None:
            model_anchor, file_anchor = (
                _indent(self.model_lines[anchor]),
                _indent(self.file_lines[anchor]),
            )
            deeper = _columns(model_indent) - _columns(model_anchor)
            if not deeper:
                return file_anchor + body
            columns = max(0, _columns(file_anchor) + round(self.scale * deeper))
        elif model_indent in self.known:
            return self.known[model_indent] + body
        else:
            columns = max(0, round(self.scale * _columns(model_indent) + self.offset))
        if self.use_tabs:
            return "\t" * (columns // TAB_WIDTH) + " " * (columns % TAB_WIDTH) + body
        return " " * columns + body

    def _anchor(self, index: int | None) -> int | None:
        """The nearest old line at or above index (else below) with text in both versions."""
        if index is None:
            return None
        above = range(min(index, len(self.model_lines) - 1), -1, -1)
        order = chain(above, range(index + 1, len(self.model_lines)))
        return next(
            (i for i in order if self.model_lines[i].strip() and self.file_lines[i].strip()), None
        )


def _stands_for(i1: int, i2: int, offset: int, file_lines: list[str]) -> int | None:
    """The old line a changed line takes the place of: the one at the same offset in a replaced
    run (the run's last for extra lines); for an insertion, the deeper of the lines around it (a
    line inserted after a block's opening line belongs in the block)."""
    if i2 > i1:
        return min(i1 + offset, i2 - 1)
    around = [i for i in (i1 - 1, i1) if 0 <= i < len(file_lines) and file_lines[i].strip()]
    return max(around, key=lambda i: (_columns(_indent(file_lines[i])), -i), default=None)


Opcode = tuple[str, int, int, int, int]


def fit_replacement(
    old_lines: list[str], new_lines: list[str], file_lines: list[str], reindent: bool
) -> list[str]:
    """new_lines as they should go into the file in place of file_lines (which matched old_lines).

    Lines the model left unchanged keep the file's exact text; changed lines are re-indented to the
    file's indentation when the match ignored indentation.
    """
    return fit_with_sources(old_lines, new_lines, file_lines, reindent)[0]


def fit_with_sources(
    old_lines: list[str],
    new_lines: list[str],
    file_lines: list[str],
    reindent: bool,
    opcodes: list[Opcode] | None = None,
) -> tuple[list[str], list[int]]:
    """fit_replacement's lines, and for each the file line whose line ending it takes (an index
    into file_lines; -1 for the line above them): its own for a kept line, the one at its place
    for a changed line, the one above for an added line. `opcodes` align old and new lines when
    the caller knows how (a patch's -/+ lines); else they are diffed."""
    indenter = Reindenter(old_lines, file_lines, new_lines) if reindent else None
    result: list[str] = []
    sources: list[int] = []
    aligned: list[Opcode] = list(
        opcodes or SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()
    )
    for tag, i1, i2, j1, j2 in aligned:
        if tag == "equal":
            result.extend(file_lines[i1:i2])
        elif indenter:
            result.extend(
                indenter.apply(new_lines[j], _stands_for(i1, i2, j - j1, file_lines))
                for j in range(j1, j2)
            )
        else:
            result.extend(new_lines[j1:j2])
        if tag == "equal":
            sources.extend(range(i1, i2))
        elif i2 > i1:
            sources.extend(min(i1 + j - j1, i2 - 1) for j in range(j1, j2))
        else:
            sources.extend([i1 - 1] * (j2 - j1))
    return result, sources
