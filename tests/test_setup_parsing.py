"""The pure parts of `keel setup`: test runners' summaries, the verdict on a test run, the config edit."""

from __future__ import annotations

import tomllib

import pytest

from keel.agent.harness.setup.output import with_test_command
from keel.agent.harness.setup.sandboxed import CommandRun
from keel.agent.harness.setup.summary import TestCount, count_tests
from keel.agent.harness.setup.verify import judge_test_run

NODE_SPEC = "✔ adds (0.5ms)\nℹ tests 4\nℹ suites 0\nℹ pass 3\nℹ fail 1\nℹ cancelled 0\n"


@pytest.mark.parametrize(
    ("output", "count"),
    [
        ("..F\n1 failed, 2 passed in 0.12s\n", TestCount(runner="pytest", collected=3, failed=1)),
        (
            "==== 5 passed, 1 skipped, 2 warnings in 1.00s ====",
            TestCount(runner="pytest", collected=6),
        ),
        ("\x1b[32m==== 3 passed in 0.01s ====\x1b[0m", TestCount(runner="pytest", collected=3)),
        (
            "collected 0 items\n\n==== no tests ran in 0.01s ====",
            TestCount(runner="pytest", collected=0),
        ),
        ("1 deselected in 0.01s", TestCount(runner="pytest", collected=0)),
        ("==== 1 error in 0.30s ====", TestCount(runner="pytest", collected=1, failed=1)),
        (
            "ERROR tests/test_calc.py\n!!!! Interrupted: 1 error during collection !!!!\n1 error in 2.02s",
            TestCount(runner="pytest", collected=1, failed=1, broken=True),
        ),
        (
            "ERROR: test_calc (unittest.loader._FailedTest.test_calc)\nRan 1 test in 0.0s\nFAILED (errors=1)",
            TestCount(runner="unittest", collected=1, failed=1, broken=True),
        ),
        ("....\n---\nRan 4 tests in 0.001s\n\nOK\n", TestCount(runner="unittest", collected=4)),
        (
            "Ran 4 tests in 0.001s\n\nFAILED (failures=1, errors=2)\n",
            TestCount(runner="unittest", collected=4, failed=3),
        ),
        ("Ran 0 tests in 0.000s\n\nNO TESTS RAN\n", TestCount(runner="unittest", collected=0)),
        ("1..2\n# tests 2\n# pass 2\n# fail 0\n", TestCount(runner="node --test", collected=2)),
        (NODE_SPEC, TestCount(runner="node --test", collected=4, failed=1)),
        (
            "Tests:       1 failed, 2 passed, 3 total\nSnapshots:   0 total\n",
            TestCount(runner="jest", collected=3, failed=1),
        ),
        ("  2 passing (8ms)\n  1 failing\n", TestCount(runner="mocha", collected=3, failed=1)),
        ("hello world\n", None),
        ('npm ERR! Missing script: "test"\n', None),
    ],
)
def test_count_tests_reads_each_runners_summary(output, count):
    assert count_tests(output) == count


def run(exit_code: int | None, output: str, timed_out: bool = False) -> CommandRun:
    return CommandRun(command="t", exit_code=exit_code, output=output, timed_out=timed_out)


@pytest.mark.parametrize(
    ("command_run", "problem"),
    [
        (run(0, "3 passed in 0.1s"), ""),
        (run(1, "1 failed, 2 passed in 0.1s"), ""),  # failing tests, said by the exit status
        (run(5, "no tests ran in 0.01s"), "reported no tests"),
        (run(0, "nothing here"), "reported no tests"),
        (run(0, "1 failed, 2 passed in 0.1s"), "exited 0 although 1 of 3 tests failed"),
        (run(2, "3 passed in 0.1s"), "exited 2 although no test failed"),
        (run(127, "bash: pytest: command not found"), "did not run (exit status 127)"),
        (run(None, "", timed_out=True), "timed out"),
        (
            run(2, "!!!! Interrupted: 1 error during collection !!!!\n1 error in 0.1s"),
            "could not load the tests",
        ),
    ],
)
def test_a_test_run_proves_the_tests_run_only_with_tests_and_a_meaningful_exit(
    command_run, problem
):
    _, found = judge_test_run(command_run)
    assert (problem in found) if problem else found == ""
    assert bool(found) == bool(problem)


def test_the_test_command_is_set_at_the_top_of_the_config_keeping_the_rest():
    old = '# mine\nmodel = "openai/x"\ntest_command = "old"\n\n[sandbox]\nnetwork = true\n'
    new = with_test_command(old, 'pytest -k "a or b"')
    assert tomllib.loads(new) == {
        "model": "openai/x",
        "test_command": 'pytest -k "a or b"',
        "sandbox": {"network": True},
    }
    assert new.startswith("# mine\n")
    fresh = with_test_command("[sandbox]\nnetwork = true\n", "npm test")
    assert tomllib.loads(fresh)["test_command"] == "npm test"
    assert tomllib.loads(with_test_command("", "npm test")) == {"test_command": "npm test"}
