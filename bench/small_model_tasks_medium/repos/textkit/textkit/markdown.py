"""Markdown to plain text: headings, emphasis, links, code and lists reduced to what a reader sees."""

from __future__ import annotations

import re

from textkit.wrap import fill

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SETEXT = re.compile(r"^(=+|-+)\s*$")
LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~)(?=\S)(.+?)(?<=\S)\1")
CODE_SPAN = re.compile(r"`([^`]+)`")
BULLET = re.compile(r"^(\s*)[-*+]\s+")
NUMBERED = re.compile(r"^(\s*)\d+[.)]\s+")
FENCE = re.compile(r"^\s*(```|~~~)")


def inline(text: str, keep_urls: bool = False) -> str:
    """One line's inline markup removed: links become their text (and URL), emphasis and code spans
    their content."""
    text = LINK.sub(lambda m: f"{m[1]} ({m[2]})" if keep_urls and m[1] else m[1], text)
    text = CODE_SPAN.sub(r"\1", text)
    previous = None
    while previous != text:  # nested emphasis: **bold _and italic_**
        previous, text = text, EMPHASIS.sub(r"\2", text)
    return text


def to_text(markdown: str, width: int | None = None, keep_urls: bool = False) -> str:
    """Markdown as plain text: headings upper-cased (level 1) or kept, list markers as `-`, code
    blocks kept verbatim, paragraphs re-wrapped to `width` when given."""
    out: list[str] = []
    paragraph: list[str] = []
    in_code = False

    def flush() -> None:
        if paragraph:
            text = " ".join(paragraph)
            out.append(fill(text, width) if width else text)
            out.append("")
            paragraph.clear()

    for line in markdown.splitlines():
        if FENCE.match(line):
            flush()
            in_code = not in_code
            continue
        if in_code:
            out.append(line)
            continue
        if not line.strip():
            flush()
            continue
        if SETEXT.match(line) and paragraph:
            title = " ".join(paragraph)
            paragraph.clear()
            out.extend([title.upper() if line.startswith("=") else title, ""])
            continue
        if heading := HEADING.match(line):
            flush()
            title = inline(heading[2], keep_urls)
            out.extend([title.upper() if len(heading[1]) == 1 else title, ""])
            continue
        if bullet := BULLET.match(line) or NUMBERED.match(line):
            flush()
            out.append(f"{bullet[1]}- {inline(line[bullet.end() :], keep_urls)}")
            continue
        paragraph.append(inline(line.strip(), keep_urls))
    flush()
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def headings(markdown: str) -> list[tuple[int, str]]:
    """(level, text) of every ATX heading outside code blocks, in order (for a table of contents)."""
    found = []
    in_code = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code and (heading := HEADING.match(line)):
            found.append((len(heading[1]), inline(heading[2])))
    return found
