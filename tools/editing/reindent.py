"""Fitting a replacement into a file: unchanged lines keep the file's exact text, changed lines
take the file's indentation (tabs stay tabs) when the match ignored indentation."""

from __future__ import annotations

import math
from difflib import SequenceMatcher

TAB_WIDTH = 4


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _columns(indent: str) -> int:
    return sum(TAB_WIDTH if char == "\t" else 1 for char in indent)


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
        self.use_tabs = any(f.startswith("\t") for _, f in pairs)
        points = sorted({(_columns(m), _columns(f)) for m, f in pairs})
        if len({m for m, _ in points}) >= 2:
            (m0, f0), (m1, f1) = points[0], points[-1]
            self.scale = (f1 - f0) / (m1 - m0)
        else:
            self.scale = 1.0
            if self.use_tabs:
                widths = [
                    _columns(_indent(line)) for line in model_lines + new_lines if line.strip()
                ]
                unit = math.gcd(*widths) if any(widths) else TAB_WIDTH
                self.scale = TAB_WIDTH / unit if unit else 1.0
        m0, f0 = points[0] if points else (0, 0)
        self.offset = f0 - self.scale * m0

    def apply(self, line: str) -> str:
        if not line.strip():
            return ""
        model_indent = _indent(line)
        body = line[len(model_indent) :]
        if model_indent in self.known:
            return self.known[model_indent] + body
        columns = max(0, round(self.scale * _columns(model_indent) + self.offset))
        if self.use_tabs:
            return "\t" * (columns // TAB_WIDTH) + " " * (columns % TAB_WIDTH) + body
        return " " * columns + body


def fit_replacement(
    old_lines: list[str], new_lines: list[str], file_lines: list[str], reindent: bool
) -> list[str]:
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
