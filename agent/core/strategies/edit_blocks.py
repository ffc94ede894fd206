"""Search/replace blocks in a reply's text (aider's edit format for files too long to rewrite whole): under a
line naming a project file, `<<<<<<< SEARCH`, the lines as they are, `=======`, the lines as they become,
`>>>>>>> REPLACE`; each block is an edit_file call. A model given no tools edits a long file this way."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from keel.agent.core.strategies.file_lines import FILE_LINE
from keel.agent.core.text_protocol import ParsedCall

_SEARCH = re.compile(r"^[ \t]*<{5,9}[ \t]*SEARCH[ \t]*$")
_DIVIDER = re.compile(r"^[ \t]*={5,9}[ \t]*$")
_REPLACE = re.compile(r"^[ \t]*>{5,9}[ \t]*REPLACE[ \t]*$")


def has_edit_blocks(text: str) -> bool:
    """Whether a text holds a search/replace block's first line (a fenced block holding one is no whole file)."""
    return any(_SEARCH.match(line) for line in text.splitlines())


def edit_blocks(text: str, size_of: Callable[[str], int | None] | None) -> list[ParsedCall]:
    """edit_file calls for the reply's search/replace blocks under a line naming a project file (`size_of`: a
    project file's length, None for any other path), in order; a block with nothing to search for, one that
    changes nothing, one not closed, or one under no project file's name is left out."""
    if size_of is None or "SEARCH" not in text:
        return []
    calls: list[ParsedCall] = []
    path: str | None = None
    lines = text.splitlines()
    at = 0
    while at < len(lines):
        line = lines[at]
        if named := FILE_LINE.match(line):  # a file that is not the project's takes no block
            path = named.group(1) if size_of(named.group(1)) is not None else None
        if not _SEARCH.match(line):
            at += 1
            continue
        block = _block(lines, at + 1)
        if block is None:
            break
        old, new, at = block
        if path is not None and old.strip() and old != new:
            arguments = {"path": path, "old_string": old, "new_string": new}
            calls.append(ParsedCall(name="edit_file", arguments=json.dumps(arguments)))
    return calls


def cut_off_file(text: str, size_of: Callable[[str], int | None] | None) -> str | None:
    """The project file a reply cut off by its length limit was giving whole: the last line naming one, then
    a fenced block the reply never closed (None when it ends otherwise)."""
    if size_of is None:
        return None
    path: str | None = None
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            if fenced and (named := FILE_LINE.match(line)) and size_of(named.group(1)) is not None:
                path = named.group(1)  # "```python money.py"
        elif not fenced and (named := FILE_LINE.match(line)):
            path = named.group(1) if size_of(named.group(1)) is not None else None
    return path if fenced else None


def _block(lines: list[str], start: int) -> tuple[str, str, int] | None:
    """The searched and replacing text of a block whose SEARCH line is just before `start`, and the line after
    its REPLACE line; None when it is not closed."""
    old: list[str] = []
    new: list[str] = []
    part = old
    for at in range(start, len(lines)):
        line = lines[at]
        if part is old and _DIVIDER.match(line):
            part = new
        elif part is new and _REPLACE.match(line):
            searched, replacing = "\n".join(old), "\n".join(new)
            if not new:  # the lines go, with their line ends
                searched += "\n"
            return searched, replacing, at + 1
        elif _SEARCH.match(line):
            return None
        else:
            part.append(line)
    return None
