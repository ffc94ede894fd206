"""Real Python blocks sent with old_string's blank lines dropped but new_string's kept (as models
do) must land exactly as the intended edit: the file's blank lines are not put back a second time."""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from keel.tools.editing.line_keys import split_lines
from keel.tools.editing.matching import MatchError, replace_text
from keel.tools.editing.patch_format import Hunk, PatchError, apply_hunks

# real, unchanging Python files: two standard library modules and keel's own editing code
SOURCES = [Path(m.__file__ or "") for m in (textwrap, shlex)] + sorted(
    (Path(__file__).parent.parent / "tools" / "editing").glob("*.py")
)
SIZE = 8
Edit = Callable[[list[str], int], list[str]]


def _changed(block: list[str], at: int) -> list[str]:
    return [*block[:at], block[at] + "  # changed", *block[at + 1 :]]


def _inserted(block: list[str], at: int) -> list[str]:
    indent = block[at][: len(block[at]) - len(block[at].lstrip())]
    return [*block[:at], indent + "log(__name__)", *block[at:]]


def _deleted(block: list[str], at: int) -> list[str]:
    return [*block[:at], *block[at + 1 :]]


EDITS: dict[str, Edit] = {"a line changed": _changed, "a line inserted": _inserted}
EDITS["a line deleted"] = _deleted


def _count(haystack: list[str], needle: list[str]) -> int:
    return sum(
        haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1)
    )


def _hunks(text: str, edit: Edit) -> list[tuple[list[str], list[str], list[str]]]:
    """(old sent, new sent, whole file as intended) for each block with blank lines inside it whose
    other lines are found once, edited at the first line after its first blank line (never the
    block's last: new_string ending in a blank line is ambiguous once joined)."""
    lines = split_lines(text)
    filled = [line for line in lines if line.strip()]
    found = []
    for start in range(0, len(lines) - SIZE, 2):
        block = lines[start : start + SIZE]
        gaps = [i for i in range(1, SIZE - 1) if not block[i].strip()]
        if not block[0].strip() or not block[-1].strip() or not gaps:
            continue
        sent = [line for line in block if line.strip()]
        if _count(filled, sent) != 1:
            continue
        at = next(i for i in range(gaps[0], SIZE) if block[i].strip())
        if at == SIZE - 1:
            continue
        edited = edit(block, at)
        found.append((sent, edited, [*lines[:start], *edited, *lines[start + SIZE :]]))
    return found


@pytest.mark.parametrize("as_hunk", [False, True], ids=["edit_file", "apply_patch hunk"])
@pytest.mark.parametrize("edit", list(EDITS))
def test_blank_lines_dropped_only_from_old_give_the_intended_edit(edit: str, as_hunk: bool) -> None:
    tried, failures = 0, []
    for source in SOURCES:
        text = source.read_text()
        for sent, new, intended in _hunks(text, EDITS[edit]):
            tried += 1
            try:
                if as_hunk:
                    result = apply_hunks(text, [Hunk(old_lines=sent, new_lines=new)], "f.py").text
                else:
                    result = replace_text(text, "\n".join(sent), "\n".join(new)).text
            except (MatchError, PatchError) as exc:
                failures.append(f"{source.name}: {str(exc)[:100]}")
                continue
            if result != "\n".join(intended) + "\n":
                failures.append(f"{source.name}: at {sent[0]!r}: not the intended edit")
    assert tried > 200
    assert not failures, f"{len(failures)} of {tried} hunks wrong:\n" + "\n".join(failures[:10])


def test_blank_lines_dropped_from_both_still_keep_the_files() -> None:
    text = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    edit = replace_text(text, "    return 1\ndef b():", "    return 10\ndef b():")
    assert edit.text == text.replace("return 1", "return 10")
