"""Every block of keel's own editing code, sent back the ways models garble it (blank lines dropped,
nesting flattened), must land exactly where and how an exact copy would."""

from __future__ import annotations

from pathlib import Path

import pytest

from keel.tools.editing.matching import MatchError, replace_text, split_lines

SOURCES = sorted((Path(__file__).parent.parent / "tools" / "editing").glob("*.py"))
SIZE = 7


def _count(haystack: list[str], needle: list[str]) -> int:
    return sum(
        haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1)
    )


def _changed(line: str) -> str:
    return line + "  # changed"


def _sweep(text: str, garble: str) -> tuple[int, list[str]]:
    """(blocks tried, failures) for one file: each block garbled, one middle line changed."""
    lines = split_lines(text)
    tried, failures = 0, []
    for start in range(len(lines) - SIZE):
        block = lines[start : start + SIZE]
        middle = [i for i in range(1, SIZE - 1) if block[i].strip()]
        if not block[0].strip() or not block[-1].strip() or not middle:
            continue
        if garble == "blank lines dropped":
            sent = [line for line in block if line.strip()]
            if len(sent) == SIZE:
                continue
            others = [line for line in lines if line.strip()]
        else:
            sent = [line.strip() for line in block]
            if len({len(line) - len(line.lstrip()) for line in block if line.strip()}) < 2:
                continue
            others = [line.strip() for line in lines]
        if _count(others, sent) != 1:
            continue
        target = middle[len(middle) // 2]
        at = sum(1 for line in block[:target] if line.strip()) if len(sent) < SIZE else target
        new_sent = sent[:at] + [_changed(sent[at])] + sent[at + 1 :]
        expected = lines[:]
        expected[start + target] = _changed(lines[start + target])
        tried += 1
        try:
            result = replace_text(text, "\n".join(sent), "\n".join(new_sent)).text
        except MatchError as exc:
            failures.append(f"line {start + 1}: {str(exc)[:120]}")
            continue
        if result != "\n".join(expected) + "\n":
            failures.append(f"line {start + 1}: wrong result")
    return tried, failures


@pytest.mark.parametrize("garble", ["blank lines dropped", "nesting flattened"])
def test_every_garbled_block_of_our_own_code_lands_exactly(garble: str) -> None:
    tried, failures = 0, []
    for source in SOURCES:
        count, failed = _sweep(source.read_text(), garble)
        tried += count
        failures += [f"{source.name} {failure}" for failure in failed]
    assert tried > 50
    assert not failures, f"{len(failures)} of {tried} blocks failed:\n" + "\n".join(failures[:10])
