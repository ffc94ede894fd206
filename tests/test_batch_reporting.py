"""Batch reporting, pure: pass@k, the progress line and how a failed command is described."""

from __future__ import annotations

import io

import pytest

from keel.agent.harness.batch.progress import Progress
from keel.agent.harness.batch.results import ResultRow, pass_at_k
from keel.agent.harness.batch.runner import CommandOutcome


def test_pass_at_k_is_the_unbiased_estimator():
    assert pass_at_k(2, 1, 1) == 0.5
    assert pass_at_k(2, 1, 2) == 1.0
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(3, 3, 1) == 1.0
    assert pass_at_k(1, 1, 4) == 1.0  # fewer attempts than k: k is capped
    assert pass_at_k(0, 0, 1) == 0.0


def test_progress_redraws_one_line_on_a_terminal():
    stream = io.StringIO()
    progress = Progress({"a": 2, "b": 2}, stream=stream, tty=True)
    progress.add(ResultRow(id="a", attempt=1, status="completed", passed=True, tokens=1500))
    progress.add(ResultRow(id="a", attempt=2, status="max_steps", tokens=20_000))
    progress.close()
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    assert "tasks 1/2 · attempts 2/4 · pass 1/2 (50%) · 22k tokens" in text


def test_progress_cuts_a_long_reason_at_a_word_with_an_ellipsis():
    stream = io.StringIO()
    reason = (
        "test `python3 check.py` exited with 1: " + "AssertionError: add(2, 3) returned -1 " * 6
    )
    Progress({"a": 1}, stream=stream, tty=False).add(
        ResultRow(id="a", attempt=1, status="completed", reason=reason)
    )
    detail = stream.getvalue().split(" fail (", 1)[1].split(") · tasks", 1)[0]
    assert detail.endswith("…") and len(detail) <= 120
    assert reason.startswith(detail[:-1]) and reason[len(detail) - 1] == " "  # cut between words


def test_progress_on_a_terminal_shows_an_error_in_full():
    stream = io.StringIO()
    reason = "APIConnectionError: could not connect to http://127.0.0.1:9/v1 " + "(details) " * 20
    progress = Progress({"a": 1}, stream=stream, tty=True)
    progress.add(ResultRow(id="a", attempt=1, status="error", reason=reason))
    progress.close()
    assert f"keel batch: a#1 error: {reason.strip()}\n" in stream.getvalue()


def test_a_failed_command_is_described_by_its_last_whole_lines():
    tail = (
        "/tmp/some/long/path/" * 20 + "\nE   assert add(2, 3) == 5\nFAILED test_calc.py::test_add\n"
    )
    outcome = CommandOutcome(command="pytest -q", exit_code=1, tail=tail)
    assert (
        outcome.describe()
        == "`pytest -q` exited with 1: …\nE   assert add(2, 3) == 5\nFAILED test_calc.py::test_add"
    )


def test_bench_attempts_without_a_verdict_are_not_counted_and_are_said_on_a_terminal():
    from keel.agent.harness.bench.results import BenchRow

    stream = io.StringIO()
    progress = Progress({"a": 1, "b": 1}, stream=stream, tty=True, command="bench")
    progress.add(BenchRow(id="a", attempt=1, status="completed", passed=True, reward=1.0))
    reason = "the verifier gave no reward: tests/test.sh wrote no reward (test.sh exited with 127)"
    progress.add(BenchRow(id="b", attempt=1, status="verifier_failed", reason=reason))
    progress.close()
    text = stream.getvalue()
    assert f"keel bench: b#1 verifier_failed: {reason}\n" in text
    assert "pass 1/1 (100%)" in text.rsplit("\r", 1)[1]


def test_check_progress_says_whether_each_attempt_did_what_it_should():
    from keel.agent.harness.bench.check import CheckProgress
    from keel.agent.harness.bench.results import BenchRow

    stream = io.StringIO()
    progress = CheckProgress({"t": 2, "u": 2}, stream=stream, tty=False, command="bench")
    progress.add(BenchRow(id="t", attempt=1, status="completed", agent="nop", reward=0.0))
    progress.add(BenchRow(id="t", attempt=1, status="completed", agent="oracle", reward=1.0, passed=True))  # fmt: skip
    progress.add(BenchRow(id="u", attempt=1, status="completed", agent="nop", reward=1.0, passed=True))  # fmt: skip
    progress.add(BenchRow(id="u", attempt=1, status="verifier_failed", agent="oracle", reason="no reward"))  # fmt: skip
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("keel bench: t nop failed, as it should · ")
    assert lines[1].startswith("keel bench: t oracle passed, as it should · ")
    assert "as expected 2/2" in lines[1] and "· pass " not in stream.getvalue()
    assert lines[2].startswith("keel bench: u nop PASSED, where it should fail · ")
    assert lines[3].startswith(
        "keel bench: u oracle no verdict (verifier_failed), where it should pass (no reward)"
    )
    assert "as expected 2/4" in lines[3]
