"""The small-model benchmark (bench/small_model.py): its tasks are valid (each check fails as given and
passes with the reference solution), its reply parser reads the shapes small models write, and the whole
bench runs both modes against a scripted model server. Real files, real processes, real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from keel_cli import keel_env

from keel.agent.core.config import resolve_config
from keel.agent.core.model.client import ModelClient
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall
from keel.agent.harness.testing.scripted_wire import content_text

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
from _small_model_keel import KeelSettings, keel_environment, run_keel
from _small_model_one_shot import one_shot_messages, parse_files, timed_one_shot
from _small_model_tasks import (
    Task,
    checks_cannot_run,
    git_repo,
    load_tasks,
    run_check,
    task_names,
    write_files,
)

TASKS = load_tasks()


def test_there_are_about_ten_tasks_each_complete():
    assert len(TASKS) >= 10
    for task in TASKS:
        assert task.files and task.check_files and task.solution, task.name
        assert task.spec.prompt.strip() and task.spec.summary.strip(), task.name
        # the check files are what the agent never sees, so they must not be among its files
        # (a visible test may be copied back to undo an agent's edit of it, with the same text)
        for path, text in task.check_files.items():
            assert task.files.get(path, text) == text, (task.name, path)


@pytest.mark.parametrize("task", TASKS, ids=[task.name for task in TASKS])
def test_the_check_fails_as_given_and_passes_with_the_reference_solution(task, tmp_path):
    untouched = git_repo(tmp_path / "untouched", task.files)
    before = run_check(task, untouched)
    assert not before.passed, f"{task.name}: the check passes before any change:\n{before.output}"

    solved = tmp_path / "solved"
    write_files(solved, task.files | task.solution)
    after = run_check(task, solved)
    assert after.passed, f"{task.name}: the reference solution fails the check:\n{after.output}"


def test_a_python_without_pytest_is_refused_before_any_attempt_is_scored(tmp_path):
    """Every check is `python -m pytest`: a bench run with a venv of keel's local extra only would fail every
    attempt of every harness, so it is refused with what to install."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    problem = checks_cannot_run(str(bare / "bin" / "python"))
    assert problem is not None and "no pytest" in problem and "pip install -e '.[test]'" in problem
    assert checks_cannot_run() is None


def test_a_subset_is_loaded_by_name_and_an_unknown_name_is_refused():
    names = task_names()
    assert [task.name for task in load_tasks(names[:2])] == names[:2]
    with pytest.raises(ValueError, match="unknown task"):
        load_tasks(["no_such_task"])


def test_the_one_shot_prompt_shows_every_file_and_the_task_but_no_check_file():
    task = next(task for task in TASKS if task.name == "failing_test")
    prompt = one_shot_messages(task)[-1]["content"]
    assert task.spec.prompt in prompt
    for path, text in task.files.items():
        assert f"FILE: {path}" in prompt and text in prompt
    assert "check_task.py" not in prompt


KNOWN = {"calc.py": "def add(a, b):\n    return a - b\n", "pkg/util.py": "X = 0\n"}
CODE = "def add(*numbers):\n    return sum(numbers)\n"


@pytest.mark.parametrize(
    "reply",
    [
        f"FILE: calc.py\n```python\n{CODE}```\n",
        f"FILE: `calc.py`\n```py\n{CODE}```",
        f"**FILE: calc.py**\n\n```\n{CODE}```\nThat fixes it.",
        f"### calc.py\n```python\n{CODE}```",
        f"Here is the fixed `calc.py`:\n```python\n{CODE}```",
        f"```python calc.py\n{CODE}```",
        f"File: ./calc.py\n```python\n{CODE}",  # the closing fence never came
        f"```python\n{CODE}```",  # no path at all: the file defining add
        f"```\nFILE: calc.py\n```python\n{CODE}```\n```",  # all wrapped in a bare fence
        f"```python\n# FILE: calc.py\n{CODE}```",
    ],
)
def test_each_reply_shape_gives_the_whole_file(reply):
    assert parse_files(reply, KNOWN) == {"calc.py": CODE}


def test_several_files_and_a_new_one_are_read_and_a_shell_block_is_not_a_file():
    reply = (
        "FILE: calc.py\n```python\n" + CODE + "```\n"
        "FILE: pkg/util.py\n```python\nX = 1\n```\n"
        "FILE: pkg/new.py\n```python\nY = 2\n```\n"
        "Run it:\n```bash\npython -m pytest\n```\n"
    )
    assert parse_files(reply, KNOWN) == {
        "calc.py": CODE,
        "pkg/util.py": "X = 1\n",
        "pkg/new.py": "Y = 2\n",
    }


def test_a_block_left_open_ends_where_the_next_one_starts():
    reply = f"FILE: calc.py\n```python\n{CODE}\nFILE: pkg/util.py\n```python\nX = 1\n```\n"
    assert parse_files(reply, KNOWN) == {"calc.py": CODE, "pkg/util.py": "X = 1\n"}


def test_paths_outside_the_workspace_are_dropped():
    reply = "FILE: ../evil.py\n```python\nX = 1\n```\nFILE: /etc/x.py\n```python\nY = 2\n```\n"
    assert parse_files(reply, KNOWN) == {}


# ---------------------------------------------------------------- the whole bench, with a scripted model


def scripted_model(task: Task) -> Callable[[ChatRequest], Reply]:
    """A model that solves `task` and nothing else: whole files in one call, or through keel
    read_file, write_file, then done."""
    path, text = next(iter(task.solution.items()))
    steps = [
        ScriptedToolCall(name="read_file", arguments={"path": path}),
        ScriptedToolCall(name="write_file", arguments={"path": path, "content": text}),
    ]

    def respond(request: ChatRequest) -> Reply:
        asked = "\n".join(
            content_text(m.get("content")) for m in request.messages if m.get("role") == "user"
        )
        solvable = task.spec.prompt in asked
        if not request.tools:
            return Reply(text=f"FILE: {path}\n```python\n{text}```\n" if solvable else "No idea.")
        done = sum(message.get("role") == "tool" for message in request.messages)
        if not solvable or done >= len(steps):
            return Reply(text="Done.")
        return Reply(tool_calls=[steps[done]])

    return respond


def test_the_bench_runs_both_modes_and_keeps_the_transcripts_of_failures(scripted_server, tmp_path):
    solved = next(task for task in TASKS if task.name == "wrong_operator")
    server = scripted_server(scripted_model(solved))
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "small_model.py"),
            *("--api-base", server.url, "--model", "openai/scripted-model"),
            *("--tasks", "wrong_operator,off_by_one", "--out", str(out), "--timeout", "120"),
        ],
        env=keel_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "one-shot 1/2 passed (50%), keel 1/2 passed (50%); keel/one-shot 1.00" in done.stdout
    results = json.loads((out / "results.json").read_text())["tasks"]
    solved_run = results["wrong_operator"]["keel"][0]
    assert solved_run["passed"] and solved_run["status"] == "completed" and solved_run["calls"] == 3
    assert results["off_by_one"]["one-shot"][0]["passed"] is False
    events = (out / "keel" / "off_by_one-1.jsonl").read_text().splitlines()
    assert json.loads(events[-1])["type"] == "session.finished"
    assert "## assistant\nDone." in (out / "keel" / "off_by_one-1.md").read_text()
    assert "No idea." in (out / "one-shot" / "off_by_one-1.md").read_text()
    assert not (out / "keel" / "wrong_operator-1.jsonl").exists()


def test_a_keel_run_past_its_timeout_is_stopped_and_counted_as_a_timeout(scripted_server):
    server = scripted_server(lambda request: Reply(text="Thinking.", delay=60))
    task = next(task for task in TASKS if task.name == "wrong_operator")
    settings = KeelSettings("openai/scripted-model", server.url, 10_000, 5, 3.0, 0.2)
    run = run_keel(task, settings)
    assert (run.passed, run.status) == (False, "timeout")
    assert run.returncode is not None  # keel itself was stopped, not left behind


def test_a_keel_call_may_take_the_attempts_whole_timeout_as_a_peers_may(tmp_path, monkeypatch):
    """keel's request_timeout (600 s) cut off the 1.5B's replies to medium tasks, which took longer on two
    cores, and asked again; aider and mini are given the attempt's timeout per call, and so is keel."""
    settings = KeelSettings("openai/qwen", "http://127.0.0.1:8392/v1", 100_000, 12, 1800.0, 0.2)
    env = keel_environment(settings, 1, tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    assert resolve_config(tmp_path, {}).request_timeout == 1800.0


async def test_a_one_shot_call_past_the_timeout_fails_its_task(scripted_server):
    """One-shot runs under the timeout keel gets (it had none: a 1,726 s call against keel's 600 s)."""
    server = scripted_server(lambda request: Reply(text="Thinking.", delay=60))
    task = next(task for task in TASKS if task.name == "wrong_operator")
    client = ModelClient(model="openai/scripted-model", api_base=server.url, retries=0)
    try:
        run = await timed_one_shot(client, task, 1.0)
    finally:
        await client.aclose()
    assert (run.passed, run.seconds, run.reply) == (False, 1.0, "(no reply within the 1 s timeout)")


async def test_a_one_shot_attempt_may_name_its_seed_so_the_embedded_models_repeats_differ(
    scripted_server,
):
    """keel's repeats on the embedded model differ by seed (KEEL_LOCAL_SEED); one-shot's get the attempt's
    number as the call's seed, or its three repeats would be one reply three times."""
    server = scripted_server(lambda request: Reply(text="No idea."))
    task = next(task for task in TASKS if task.name == "wrong_operator")
    client = ModelClient(model="openai/scripted-model", api_base=server.url, retries=0)
    try:
        await timed_one_shot(client, task, 60.0, seed=2)
        await timed_one_shot(client, task, 60.0)
    finally:
        await client.aclose()
    assert [request.body.get("seed") for request in server.requests] == [2, None]
