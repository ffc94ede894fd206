"""HTML to markdown-ish text with the standard library's parser: headings, links, lists and code kept, scripts,
styles and page chrome dropped, so a model reads the page's content and not its markup."""

from __future__ import annotations

import re
from html.parser import HTMLParser

SKIPPED = frozenset(
    {"title", "script", "style", "noscript", "template", "svg", "head", "iframe", "canvas"}
)
CHROME = frozenset({"nav", "footer", "aside"})
BLOCKS = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "form", "table", "ul", "ol",
        "dl", "dt", "dd", "blockquote", "figure", "figcaption", "details", "summary", "hr", "br",
    }
)  # fmt: skip
HEADINGS = {f"h{level}": "#" * level for level in range(1, 7)}
VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr"})


class _TextWriter(HTMLParser):
    """Collects the page's text as it parses, with markdown marks for its structure."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0  # depth inside elements whose text is not content
        self._in_title = False
        self._pre = 0
        self._links: list[str | None] = []
        self._lists: list[str] = []
        self._numbers: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in SKIPPED or tag in CHROME:
            if tag not in VOID:
                self._skip += 1
            return
        if self._skip:
            return
        if tag in HEADINGS:
            self._block(HEADINGS[tag] + " ")
        elif tag in ("ul", "ol"):
            self._lists.append(tag)
            self._numbers.append(0)
            self._block("")
        elif tag == "li":
            depth = max(len(self._lists) - 1, 0)
            if self._lists and self._lists[-1] == "ol":
                self._numbers[-1] += 1
                self._block("  " * depth + f"{self._numbers[-1]}. ", "\n")
            else:
                self._block("  " * depth + "- ", "\n")
        elif tag == "pre":
            self._pre += 1
            self._block("```\n")
        elif tag == "code" and not self._pre:
            self.parts.append("`")
        elif tag == "tr":
            self._block("|", "\n")
        elif tag in ("td", "th"):
            self.parts.append(" ")
        elif tag == "a":
            self._links.append(dict(attrs).get("href"))
            self.parts.append("[")
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self.parts.append(f"[image: {alt}]")
        elif tag in BLOCKS:
            self._block("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in SKIPPED or tag in CHROME:
            self._skip = max(self._skip - 1, 0)
            return
        if self._skip:
            return
        if tag in ("ul", "ol") and self._lists:
            self._lists.pop()
            self._numbers.pop()
            self._block("")
        elif tag == "pre":
            self._pre = max(self._pre - 1, 0)
            self.parts.append("\n```\n\n")
        elif tag == "code" and not self._pre:
            self.parts.append("`")
        elif tag in ("td", "th"):
            self.parts.append(" |")
        elif tag == "a" and self._links:
            href = self._links.pop()
            self.parts.append(f"]({href})" if href and not href.startswith("#") else "]")
        elif tag in HEADINGS or tag in BLOCKS:
            self._block("")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._skip:
            return
        self.parts.append(data if self._pre else re.sub(r"\s+", " ", data))

    def _block(self, prefix: str, gap: str = "\n\n") -> None:
        """A new block: a blank line (a list item: a line break) before it, then its mark."""
        self.parts.append(gap + prefix)


def html_to_text(html: str) -> tuple[str, str]:
    """The page's title and its readable text."""
    writer = _TextWriter()
    writer.feed(html)
    writer.close()
    return " ".join(writer.title.split()), tidy("".join(writer.parts))


def tidy(text: str) -> str:
    """Lines stripped of trailing space, runs of blank lines made one, empty links dropped."""
    text = re.sub(r"\[\s*\]\([^)]*\)", "", text)
    lines = [line.rstrip() for line in text.split("\n")]
    kept: list[str] = []
    for line in lines:
        if not line.strip():
            if kept and kept[-1] != "":
                kept.append("")
            continue
        kept.append(line if line.startswith((" ", "```")) else line.lstrip())
    return "\n".join(kept).strip()
