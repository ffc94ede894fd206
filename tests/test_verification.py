"""Verification of a task's changes before it ends (issue 29, point 4): a Session against the scripted server
over real HTTP, in a real git repo, its checks run for real (compile, ruff, the test command in the sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest
from keel_cli import git_repo, run_keel
from session_support import until_finished
from small_model_support import (
    CALC,
    CAPABLE,
    FIX,
    SMALL,
    call,
    keel_messages,
    run_task,
    served_settings,
)

from keel.agent.core.protocol import Continue, TaskFinished, VerificationFinished
from keel.agent.core.session import Session
from keel.agent.harness.testing.scripted_server import Reply

BROKEN = {"path": "calc.py", "content": "def add(a, b)\n    return a + b\n"}  # no colon
FIXED = {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"}
ADDS = "python3 -c 'import calc; assert calc.add(2, 3) == 5'"


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", CALC)


def verifications(events) -> list[VerificationFinished]:
    return [e for e in events if isinstance(e, VerificationFinished)]


async def test_a_syntax_error_goes_back_to_a_small_model_which_fixes_it(scripted_server, workspace):
    server = scripted_server(
        [call("write_file", **BROKEN), Reply(text="Fixed add."), call("write_file", **FIXED)]
        + [Reply(text="Fixed add, for real.")]
    )
    events, log = await run_task(served_settings(server, workspace), "fix the add function")
    finished = events[-1]
    assert isinstance(finished, TaskFinished) and finished.status == "completed"
    feedback = keel_messages(events, "verification")
    assert len(feedback) == 1 and "calc.py:1" in feedback[0] and "SyntaxError" in feedback[0]
    assert "SyntaxError" in server.requests[2].last_text("user")  # the model was shown it
    first, second = verifications(events)
    assert (first.passed, first.final, second.passed, second.final) == (False, False, True, True)
    assert first.files == ["calc.py"] and [c.name for c in second.checks] == [
        "syntax",
        "lint",
        "imports",
        "tests",
    ]
    assert finished.final_message.startswith("Fixed add, for real.")
    assert "Verified by keel: syntax (calc.py); lint (calc.py)" in finished.final_message
    assert verifications(log) == verifications(events)


async def test_a_model_that_never_fixes_it_ends_after_the_retries_with_the_failures(
    scripted_server, workspace
):
    server = scripted_server([call("write_file", **BROKEN)] + [Reply(text="Done.")] * 3)
    events, _ = await run_task(served_settings(server, workspace), "fix the add function")
    finished = events[-1]
    assert isinstance(finished, TaskFinished) and finished.status == "completed"
    rounds = verifications(events)
    assert [(r.round, r.passed, r.final) for r in rounds] == [
        (1, False, False),
        (2, False, False),
        (3, False, True),
    ]
    assert len(keel_messages(events, "verification")) == 2  # verify_retries = 2
    assert "This is the last check" in keel_messages(events, "verification")[1]
    assert finished.final_message.startswith("Done.")
    assert "keel's checks still fail after 3 rounds" in finished.final_message
    assert "SyntaxError" in finished.final_message and len(server.requests) == 4


async def test_a_lint_error_goes_back_but_an_unused_import_does_not(scripted_server, workspace):
    undefined = {"path": "calc.py", "content": "import os\n\n\ndef add(a, b):\n    return a + c\n"}
    unused = {"path": "calc.py", "content": "import os\n\n\ndef add(a, b):\n    return a + b\n"}
    server = scripted_server(
        [call("write_file", **undefined), Reply(text="Done."), call("write_file", **unused)]
        + [Reply(text="Done now.")]
    )
    events, _ = await run_task(served_settings(server, workspace), "fix the add function")
    (feedback,) = keel_messages(events, "verification")
    assert "calc.py:5:" in feedback and "F821" in feedback and "F401" not in feedback
    assert [r.passed for r in verifications(events)] == [False, True]


async def test_a_passing_test_command_is_reported_as_verified(scripted_server, workspace):
    server = scripted_server([call("write_file", **FIXED), Reply(text="add() now adds.")])
    chosen = served_settings(server, workspace, test_command=ADDS)
    events, _ = await run_task(chosen, "fix the add function")
    (only,) = verifications(events)
    tests = next(c for c in only.checks if c.name == "tests")
    assert (only.passed, tests.status) == (True, "passed"), only
    assert f"tests (`{ADDS}` passed)" in events[-1].final_message


async def test_a_failing_test_command_goes_back_with_its_output(scripted_server, workspace):
    wrong = {"path": "calc.py", "content": "def add(a, b):\n    return a * b\n"}
    server = scripted_server(
        [call("write_file", **wrong), Reply(text="Done."), call("write_file", **FIXED)]
        + [Reply(text="Done now.")]
    )
    chosen = served_settings(server, workspace, test_command=ADDS)
    events, _ = await run_task(chosen, "fix the add function")
    (feedback,) = keel_messages(events, "verification")
    assert "AssertionError" in feedback and "exit code 1" in feedback
    assert [r.passed for r in verifications(events)] == [False, True]
    assert "passed)" in events[-1].final_message


async def test_the_tests_that_import_a_changed_module_are_run_without_a_test_command(
    scripted_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    test = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    workspace = git_repo(tmp_path / "repo", {**CALC, "tests/test_calc.py": test})
    wrong = {"path": "calc.py", "content": "def add(a, b):\n    return a * b\n"}
    server = scripted_server([call("write_file", **wrong), Reply(text="Done.")] * 3)
    events, _ = await run_task(served_settings(server, workspace), "fix the add function")
    tests = [c for r in verifications(events) for c in r.checks if c.name == "tests"]
    if tests[0].summary == "pytest is not installed":
        pytest.skip("no pytest for python3 in the sandbox")
    assert tests[0].status == "failed" and "tests/test_calc.py" in tests[0].summary
    assert "assert 6 == 5" in tests[0].output


async def test_a_capable_model_is_not_verified_by_default(scripted_server, workspace):
    read = call("read_file", path="calc.py")
    server = scripted_server([read, call("write_file", **BROKEN), Reply(text="Fixed add.")])
    events, _ = await run_task(served_settings(server, workspace, CAPABLE), "fix the add function")
    assert "def add(a, b)\n" in (workspace / "calc.py").read_text()  # the broken file was written
    assert verifications(events) == [] and keel_messages(events, "verification") == []
    assert events[-1].final_message == "Fixed add." and len(server.requests) == 3


async def test_verification_can_be_turned_on_for_every_model_or_off(scripted_server, workspace):
    read = call("read_file", path="calc.py")
    server = scripted_server([read, call("write_file", **FIXED), Reply(text="Fixed add.")])
    always = served_settings(server, workspace, CAPABLE, loop={"verify": "always"})
    events, _ = await run_task(always, "fix the add function")
    assert [r.passed for r in verifications(events)] == [True]
    server = scripted_server([call("write_file", **BROKEN), Reply(text="Fixed add.")])
    off = served_settings(server, workspace, loop={"verify": "never"})
    events, _ = await run_task(off, "fix the add function")
    assert verifications(events) == [] and events[-1].final_message == "Fixed add."


async def test_a_task_that_changed_nothing_is_not_verified(scripted_server, workspace):
    server = scripted_server([Reply(text="It subtracts.")])
    events, _ = await run_task(served_settings(server, workspace), "what does calc.py do?")
    assert verifications(events) == [] and events[-1].final_message == "It subtracts."


async def test_a_resumed_task_keeps_its_count_of_rounds(scripted_server, workspace):
    server = scripted_server([call("write_file", **BROKEN), Reply(text="Done.")])
    events, _ = await run_task(served_settings(server, workspace, max_steps=2), "fix add")
    assert events[-1].status == "max_steps" and len(verifications(events)) == 1
    server = scripted_server([Reply(text="Done."), Reply(text="Still done.")])
    log_path = next((workspace.parent / "home" / "sessions").rglob("*.jsonl"))
    async with Session(served_settings(server, workspace), resume=log_path) as session:
        assert (
            session.state.strategy.verifications == 1
            and session.state.strategy.task_changed == {"calc.py"}
        )
        session.submit(Continue())
        resumed = await until_finished(session)
    assert [(r.round, r.final) for r in verifications(resumed)] == [(2, False), (3, True)]
    assert "still fail after 3 rounds" in resumed[-1].final_message


@pytest.mark.parametrize("output_format", ["stream-json", "text"])
def test_keel_run_shows_each_check_and_ends_with_what_was_verified(
    scripted_server, workspace, output_format
):
    replies = [call("write_file", **BROKEN), Reply(text="Done."), call("write_file", **FIXED)]
    server = scripted_server([*replies, Reply(text="Done now.")])
    result = run_keel(
        "run",
        *("--model", SMALL, "--api-base", server.url, "--output-format", output_format),
        "fix the add function",
        cwd=workspace,
        home=workspace.parent / "home",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    if output_format == "text":
        assert "keel: checks of the changed files failed (round 1): syntax failed" in result.stderr
        assert "keel: checks of the changed files passed (round 2)" in result.stderr
        assert result.stdout.startswith("Done now.\n\nVerified by keel: syntax (calc.py)")
        return
    checks = [e for e in result.events if e["type"] == "verification.finished"]
    assert [(c["round"], c["passed"], c["final"]) for c in checks] == [
        (1, False, False),
        (2, True, True),
    ]
    assert (
        checks[0]["checks"][0]["name"] == "syntax"
        and "SyntaxError" in checks[0]["checks"][0]["output"]
    )
    assert "Verified by keel" in result.events[-1]["final_message"]


@pytest.mark.parametrize("trusted", [False, True])
def test_an_untrusted_repositorys_test_command_is_not_run_by_keel(
    scripted_server, workspace, trusted
):
    """A cloned repository's config names a test command: keel's verification runs it only once the person
    trusts the folder (the model still reads it in the prompt, and may run it under the approval)."""
    (workspace / ".keel").mkdir(exist_ok=True)
    (workspace / ".keel" / "config.toml").write_text('test_command = "touch ran-by-keel"\n')
    server = scripted_server([call("write_file", **FIXED), Reply(text="Done.")])
    result = run_keel(
        "run",
        *("--model", SMALL, "--api-base", server.url, "--approval", "full-auto"),
        *(["--trust"] if trusted else []),
        "fix the add function",
        cwd=workspace,
        home=workspace.parent / "home",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (workspace / "ran-by-keel").exists() is trusted
    if not trusted:
        assert "test_command (as a command keel runs to verify changes)" in result.stderr


CALC_TESTED = {
    **CALC,
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


async def test_a_small_model_told_to_make_a_test_pass_sees_how_it_fails_with_the_files(
    scripted_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    workspace = git_repo(tmp_path / "repo", CALC_TESTED)
    server = scripted_server([call("edit_file", **FIX), Reply(text="Fixed add.")])
    events, _ = await run_task(served_settings(server, workspace), "make the failing test pass")
    (given,) = keel_messages(events, "context")
    assert "The project's tests fail now" in given and "test_calc.py" in given
    assert "assert -1 == 5" in given  # pytest's own account of the failure
    assert "assert -1 == 5" in server.requests[0].last_text("user")
    assert verifications(events)[-1].passed


async def test_passing_tests_or_a_capable_model_get_no_test_run_up_front(
    scripted_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    passing = {**CALC_TESTED, "calc.py": "def add(a, b):\n    return a + b\n"}
    workspace = git_repo(tmp_path / "repo", passing)
    server = scripted_server([Reply(text="Nothing to fix.")])
    events, _ = await run_task(served_settings(server, workspace), "make the failing test pass")
    (given,) = keel_messages(events, "context")
    assert "tests fail" not in given
    capable_at = git_repo(tmp_path / "capable", CALC_TESTED)
    server = scripted_server([Reply(text="Nothing to fix.")])
    settings = served_settings(server, capable_at, model=CAPABLE)
    events, _ = await run_task(settings, "make the failing test pass")
    assert keel_messages(events, "context") == []
    assert "tests fail" not in server.requests[0].last_text("user")


def whole_file(path: str, content: str, words: str = "") -> Reply:
    return Reply(text=f"FILE: {path}\n```python\n{content}```\n{words}")


async def test_a_small_models_files_answering_the_project_end_the_task_once_verified(
    scripted_server, workspace
):
    server = scripted_server([whole_file("calc.py", FIXED["content"], "I fixed add.")])
    events, _ = await run_task(served_settings(server, workspace), "fix the add function")
    finished = events[-1]
    assert isinstance(finished, TaskFinished) and finished.status == "completed"
    assert len(server.requests) == 1  # as in one call: nobody asks it what it did
    assert (workspace / "calc.py").read_text() == FIXED["content"]
    assert finished.final_message.startswith("I fixed add.\n\nVerified by keel: syntax (calc.py)")
    assert verifications(events)[-1].passed


async def test_files_that_fail_the_checks_go_back_and_the_task_goes_on(scripted_server, workspace):
    server = scripted_server(
        [whole_file("calc.py", BROKEN["content"]), call("write_file", **FIXED)]
        + [Reply(text="Fixed the colon.")]
    )
    events, _ = await run_task(served_settings(server, workspace), "fix the add function")
    finished = events[-1]
    assert isinstance(finished, TaskFinished) and finished.status == "completed"
    assert "SyntaxError" in server.requests[1].last_text("user")
    assert len(server.requests) == 3 and finished.final_message.startswith("Fixed the colon.")
    assert [v.passed for v in verifications(events)] == [False, True]
