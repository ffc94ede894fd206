"""Globs for search and find_files, matched in Python so they never override .gitignore rules.

(rg's own `--glob` does: `-g '**/*'` lists .git and ignored directories.) The syntax is
.gitignore's: a glob without '/' matches file names at any depth; with '/' it matches the whole
relative path; '**' spans directories, '*' and '?' stay within one, '[...]' and '{a,b}' as usual;
a leading '!' excludes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class GlobError(ValueError):
    """A glob that cannot be read; the message says what is wrong."""


@dataclass(frozen=True)
class PathGlob:
    body: str  # normalized, without the leading '!'
    negated: bool
    on_name: bool  # True: matched against the file name only
    regex: re.Pattern[str]

    def matches(self, relative_path: str) -> bool:
        """Whether a '/'-separated path, relative to the searched directory, is selected."""
        subject = relative_path.rsplit("/", 1)[-1] if self.on_name else relative_path
        return (self.regex.fullmatch(subject) is not None) != self.negated

    @property
    def name_part(self) -> str | None:
        """A name glob all selected files match (`*.py` for `src/**/*.py`), to prefilter in rg."""
        if self.negated:
            return None
        if self.on_name:
            return self.body
        head, _, last = self.body.rpartition("/")
        if "**" in last or not _balanced(head) or not _balanced(last):
            return None
        return last

    @property
    def names_hidden(self) -> bool:
        return names_hidden(self.body)


def names_hidden(text: str | None) -> bool:
    """Whether a path or glob names a dotfile or dot-directory, so hidden files must be walked."""
    if not text:
        return False
    return any(part.startswith(".") and part not in (".", "..") for part in text.split("/"))


def _balanced(text: str) -> bool:
    return text.count("{") == text.count("}") and text.count("[") == text.count("]")


def compile_glob(text: str) -> PathGlob:
    negated = text.startswith("!")
    body = text[1:] if negated else text
    while body.startswith("./"):
        body = body[2:]
    body = body.lstrip("/")
    if body.endswith("/"):
        body += "**"  # a directory: everything in it
    if body.startswith("**/") and "/" not in body[3:]:
        body = body[3:]
    if not body:
        raise GlobError(f"the glob {text!r} is empty; use e.g. '*.py' or 'src/**'")
    return PathGlob(body, negated, "/" not in body, re.compile(_translate(body)))


def _closing(text: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index of the bracket closing the one at `start`, or -1."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if (
            open_ch == "["
            and ch == "]"
            and i in (start + 1, start + 2)
            and text[start + 1 : i] in ("", "!", "^")
        ):
            i += 1  # a ']' first in a class is a literal
            continue
        if ch == open_ch and open_ch != "[":
            depth += 1
        elif ch == close_ch:
            if open_ch == "[" or depth == 1:
                return i
            depth -= 1
        i += 1
    return -1


def _split_alternatives(inner: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (ch == "{") - (ch == "}")
        current += ch
    return [*parts, current]


def _translate(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        at_component_start = i == 0 or glob[i - 1] == "/"
        if glob.startswith("**/", i) and at_component_start:
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i) and at_component_start and i + 2 == len(glob):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 2 if glob.startswith("**", i) else 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[":
            end = _closing(glob, i, "[", "]")
            if end < 0:
                raise GlobError(f"unclosed character class '[' in the glob {glob!r}")
            members = glob[i + 1 : end]
            if members[:1] in ("!", "^"):
                members = "^" + members[1:]
            out.append("[" + members.replace("\\", "\\\\").replace("[", "\\[") + "]")
            i = end + 1
        elif glob[i] == "{":
            end = _closing(glob, i, "{", "}")
            if end < 0:
                raise GlobError(f"unclosed alternation '{{' in the glob {glob!r}")
            options = _split_alternatives(glob[i + 1 : end])
            out.append("(?:" + "|".join(_translate(option) for option in options) + ")")
            i = end + 1
        elif glob[i] == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)
