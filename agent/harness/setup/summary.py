"""What a test run reported: pure parsers of pytest's, unittest's and npm test's (node's test runner, jest,
mocha) summary lines, so keel can tell a test command that ran tests from one that ran none."""

from __future__ import annotations

import re

from pydantic import BaseModel

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# pytest: "3 passed, 1 failed, 2 skipped in 0.12s", "collected 4 items", "no tests ran in 0.01s"
_PYTEST_TAIL = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+) in [\d.]+s", re.MULTILINE)
_PYTEST_PART = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")
_PYTEST_COLLECTED = re.compile(r"^collected (\d+) items?", re.MULTILINE)
# unittest: "Ran 3 tests in 0.001s" then "OK" or "FAILED (failures=1, errors=2)"
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in", re.MULTILINE)
_UNITTEST_FAILED = re.compile(r"^FAILED \(([^)]*)\)", re.MULTILINE)
# the run stopped before the tests ran: pytest's collection errors, a test module unittest could not import
_BROKEN = re.compile(r"^!+ Interrupted: .*!+$|unittest\.loader\._FailedTest", re.MULTILINE)
# node --test (TAP "# tests 3" or spec "ℹ tests 3"), jest ("Tests:  1 failed, 2 passed, 3 total"), mocha
_NODE = re.compile(r"^(?:#|ℹ)\s+(tests|pass|fail)\s+(\d+)\s*$", re.MULTILINE)
_JEST = re.compile(r"^Tests:\s+(.*?)(\d+) total", re.MULTILINE)
_JEST_FAILED = re.compile(r"(\d+) failed")
_MOCHA = re.compile(r"^\s*(\d+) (passing|failing)\b", re.MULTILINE)


class TestCount(BaseModel):
    """How many tests a run reported, how many of them failed, and which runner said so."""

    __test__ = False  # not a pytest test class

    runner: str
    collected: int
    failed: int = 0
    broken: bool = (
        False  # tests could not be loaded (an import error): the suite did not really run
    )


def _pytest(text: str) -> TestCount | None:
    tails = _PYTEST_TAIL.findall(text)
    if not tails:
        collected = _PYTEST_COLLECTED.findall(text)
        return TestCount(runner="pytest", collected=int(collected[-1])) if collected else None
    counts: dict[str, int] = {}
    for number, word in _PYTEST_PART.findall(tails[-1]):
        counts[word.rstrip("s") if word.startswith("error") else word] = int(number)
    ran = sum(
        counts.get(k, 0) for k in ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
    )
    failed = counts.get("failed", 0) + counts.get("error", 0)
    return TestCount(runner="pytest", collected=ran, failed=failed)


def _unittest(text: str) -> TestCount | None:
    ran = _UNITTEST_RAN.findall(text)
    if not ran:
        return None
    failed = 0
    if details := _UNITTEST_FAILED.findall(text):
        failed = sum(int(n) for n in re.findall(r"(?:failures|errors)=(\d+)", details[-1]))
    return TestCount(runner="unittest", collected=int(ran[-1]), failed=failed)


def _node(text: str) -> TestCount | None:
    found = dict(_NODE.findall(text))
    if "tests" not in found:
        return None
    return TestCount(
        runner="node --test", collected=int(found["tests"]), failed=int(found.get("fail", 0))
    )


def _jest(text: str) -> TestCount | None:
    lines = _JEST.findall(text)
    if not lines:
        return None
    parts, total = lines[-1]
    failed = _JEST_FAILED.search(parts)
    return TestCount(
        runner="jest", collected=int(total), failed=int(failed.group(1)) if failed else 0
    )


def _mocha(text: str) -> TestCount | None:
    found = {word: int(number) for number, word in _MOCHA.findall(text)}
    if "passing" not in found and "failing" not in found:
        return None
    failing = found.get("failing", 0)
    return TestCount(runner="mocha", collected=found.get("passing", 0) + failing, failed=failing)


def count_tests(output: str) -> TestCount | None:
    """The tests a run's output reports (the first runner whose summary is found), or None."""
    text = _ANSI.sub("", output).replace("\r\n", "\n")
    for parse in (_pytest, _unittest, _jest, _node, _mocha):
        if (count := parse(text)) is not None:
            return count.model_copy(update={"broken": bool(_BROKEN.search(text))})
    return None
