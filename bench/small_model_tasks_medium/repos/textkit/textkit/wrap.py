"""Word wrapping: lines of at most a width, paragraphs kept apart, indents, shortening."""

from __future__ import annotations

import re

PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
WHITESPACE = re.compile(r"\s+")
ELLIPSIS = "…"


def wrap(
    text: str, width: int = 70, initial_indent: str = "", subsequent_indent: str = ""
) -> list[str]:
    """The words of `text` in lines of at most `width` characters, indents included."""
    if width <= len(initial_indent) or width <= len(subsequent_indent):
        raise ValueError("width must be larger than the indents")
    lines: list[str] = []
    current = initial_indent
    empty = True
    for word in WHITESPACE.split(text.strip()):
        if not word:
            continue
        if empty:
            current += word
            empty = False
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = subsequent_indent + word
    if not empty:
        lines.append(current)
    return lines


def fill(text: str, width: int = 70, indent: str = "") -> str:
    """`text` re-wrapped to `width`, paragraphs (split by blank lines) kept apart by one blank line."""
    paragraphs = [part for part in PARAGRAPH_BREAK.split(text) if part.strip()]
    return "\n\n".join(
        "\n".join(wrap(paragraph, width, indent, indent)) for paragraph in paragraphs
    )


def indent(text: str, prefix: str, blank_lines: bool = False) -> str:
    """Every line of `text` with `prefix` in front (blank lines too when `blank_lines`)."""
    return "".join(
        prefix + line if line.strip() or blank_lines else line
        for line in text.splitlines(keepends=True)
    )


def dedent(text: str) -> str:
    """`text` without the indentation all its non-blank lines share."""
    lines = text.splitlines(keepends=True)
    margins = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    margin = min(margins, default=0)
    return "".join(line[margin:] if line.strip() else line.lstrip(" \t") for line in lines)


def shorten(text: str, width: int, placeholder: str = ELLIPSIS) -> str:
    """`text` on one line, cut at a word boundary to fit `width` with `placeholder` at its end."""
    flat = WHITESPACE.sub(" ", text.strip())
    if len(flat) <= width:
        return flat
    room = width - len(placeholder)
    if room <= 0:
        return placeholder[:width]
    cut = flat[: room + 1].rsplit(" ", 1)[0] if " " in flat[: room + 1] else flat[:room]
    return cut[:room].rstrip() + placeholder
