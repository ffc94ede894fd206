"""Every block of keel's own editing code, sent back the ways models garble it (blank lines dropped,
nesting flattened, quotes escaped, a line misremembered), must land exactly as an exact copy would."""

from __future__ import annotations

from pathlib import Path

import pytest

from keel.tools.editing.line_keys import split_lines
from keel.tools.editing.matching import MatchError, replace_text
from keel.tools.editing.patch_format import Hunk, PatchError, apply_hunks

SOURCES = sorted((Path(__file__).parent.parent / "tools" / "editing").glob("*.py"))
SIZE = 7


def _count(haystack: list[str], needle: list[str]) -> int:
    return sum(
        haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1)
    )


def _changed(line: str) -> str:
    return line + "  # changed"


def _blanks_dropped(block: list[str], lines: list[str]) -> list[str] | None:
    sent = [line for line in block if line.strip()]
    others = [line for line in lines if line.strip()]
    return sent if len(sent) < SIZE and _count(others, sent) == 1 else None


def _flattened(block: list[str], lines: list[str]) -> list[str] | None:
    if len({len(line) - len(line.lstrip()) for line in block if line.strip()}) < 2:
        return None
    sent = [line.strip() for line in block]
    return sent if _count([line.strip() for line in lines], sent) == 1 else None


def _escaped(block: list[str], lines: list[str]) -> list[str] | None:
    joined = "\n".join(block)
    if "\\" in joined or not {"'", '"'} & set(joined) or _count(lines, block) != 1:
        return None
    return [line.replace("'", "\\'").replace('"', '\\"') for line in block]


def _misremembered(block: list[str], lines: list[str]) -> list[str] | None:
    """One long middle line with a character changed; first and last lines found together once."""
    longest = max(range(1, SIZE - 1), key=lambda i: len(block[i].strip()))
    line = block[longest]
    pairs = sum(
        lines[i] == block[0] and lines[i + SIZE - 1] == block[-1]
        for i in range(len(lines) - SIZE + 1)
    )
    if len(line.strip()) < 24 or pairs != 1 or not all(map(str.strip, block)):
        return None
    at = len(line) - len(line.strip()) // 2
    return [*block[:longest], line[:at] + "~" + line[at + 1 :], *block[longest + 1 :]]


GARBLES = {
    "blank lines dropped": _blanks_dropped,
    "nesting flattened": _flattened,
    "quotes escaped": _escaped,
    "a middle line misremembered": _misremembered,
}


def _apply(text: str, sent: list[str], new_sent: list[str], as_hunk: bool) -> str:
    if as_hunk:
        return apply_hunks(text, [Hunk(old_lines=sent, new_lines=new_sent)], "f.py").text
    return replace_text(text, "\n".join(sent), "\n".join(new_sent)).text


def _sweep(text: str, garble: str, as_hunk: bool = False) -> tuple[int, list[str]]:
    """(blocks tried, failures) for one file: each block garbled, then one of its lines changed
    (the first when the middle was garbled, else a middle one), by edit_file's cascade or as a
    patch hunk."""
    lines = split_lines(text)
    tried, failures = 0, []
    for start in range(len(lines) - SIZE):
        block = lines[start : start + SIZE]
        middle = [i for i in range(1, SIZE - 1) if block[i].strip()]
        if not block[0].strip() or not block[-1].strip() or not middle:
            continue
        sent = GARBLES[garble](block, lines)
        if sent is None:
            continue
        target = 0 if garble == "a middle line misremembered" else middle[len(middle) // 2]
        at = sum(1 for line in block[:target] if line.strip()) if len(sent) < SIZE else target
        new_sent = sent[:at] + [_changed(sent[at])] + sent[at + 1 :]
        expected = lines[:]
        expected[start + target] = _changed(lines[start + target])
        tried += 1
        try:
            result = _apply(text, sent, new_sent, as_hunk)
        except (MatchError, PatchError) as exc:
            failures.append(f"line {start + 1}: {str(exc)[:120]}")
            continue
        if result != "\n".join(expected) + "\n":
            failures.append(f"line {start + 1}: wrong result")
    return tried, failures


@pytest.mark.parametrize("garble", list(GARBLES))
def test_every_garbled_block_of_our_own_code_lands_exactly(garble: str) -> None:
    tried, failures = 0, []
    for source in SOURCES:
        count, failed = _sweep(source.read_text(), garble)
        tried += count
        failures += [f"{source.name} {failure}" for failure in failed]
    assert tried > 50
    assert not failures, f"{len(failures)} of {tried} blocks failed:\n" + "\n".join(failures[:10])


@pytest.mark.parametrize("garble", [g for g in GARBLES if g != "quotes escaped"])
def test_every_garbled_block_of_our_own_code_applies_as_a_hunk(garble: str) -> None:
    tried, failures = 0, []
    for source in SOURCES:
        count, failed = _sweep(source.read_text(), garble, as_hunk=True)
        tried += count
        failures += [f"{source.name} {failure}" for failure in failed]
    assert tried > 50
    assert not failures, f"{len(failures)} of {tried} blocks failed:\n" + "\n".join(failures[:10])


def test_blocks_with_two_lines_rewritten_are_refused_with_the_closest_text() -> None:
    refused = 0
    for source in SOURCES:
        text = source.read_text()
        lines = split_lines(text)
        for start in range(0, len(lines) - SIZE, 3):
            block = lines[start : start + SIZE]
            if not all(line.strip() for line in block):
                continue
            sent = [
                *block[:2],
                "    result = unrelated_call(x, y)",
                "    return result",
                *block[4:],
            ]
            with pytest.raises(MatchError) as info:
                replace_text(text, "\n".join(sent), "\n".join(block))
            assert "First difference" in str(info.value) or "nothing in the file" in str(info.value)
            refused += 1
    assert refused > 50
