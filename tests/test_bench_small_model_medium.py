"""The medium task set of bench/small_model.py (bench/small_model_tasks_medium/): repositories too large to
paste, a terse prompt that names no file, and hidden checks that fail on the repository as given and pass
with the reference solution. Also how `--set` and the peer modes are chosen on the command line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
from _small_model_tasks import (
    MEDIUM_TASKS_DIR,
    git_repo,
    load_task,
    load_tasks,
    run_check,
    write_files,
)
from small_model import parse_options

TASKS = load_tasks(root=MEDIUM_TASKS_DIR)


def test_there_are_at_least_six_medium_tasks_each_a_repository_too_large_to_paste():
    assert len(TASKS) >= 6
    for task in TASKS:
        size = sum(len(text) for text in task.files.values())
        assert 8 <= len(task.files) <= 20, (task.name, len(task.files))
        assert 40_000 <= size <= 90_000, (task.name, size)
        assert task.check_files and task.solution and task.spec.summary.strip(), task.name
        for path in task.check_files:
            assert path not in task.files, (task.name, path)  # the agent never sees the checks


@pytest.mark.parametrize("task", TASKS, ids=[task.name for task in TASKS])
def test_the_prompt_names_no_file_the_agent_must_find(task):
    for path in task.files:
        assert path not in task.spec.prompt and Path(path).name not in task.spec.prompt


@pytest.mark.parametrize("task", TASKS, ids=[task.name for task in TASKS])
def test_the_check_fails_as_given_and_passes_with_the_reference_solution(task, tmp_path):
    untouched = git_repo(tmp_path / "untouched", task.files)
    before = run_check(task, untouched)
    assert not before.passed, f"{task.name}: the check passes before any change:\n{before.output}"
    assert "check_task.py" in before.output  # it is the hidden check that fails, not the setup

    solved = tmp_path / "solved"
    write_files(solved, task.files | task.solution)
    after = run_check(task, solved)
    assert after.passed, f"{task.name}: the reference solution fails the check:\n{after.output}"


def test_a_break_whose_text_is_not_in_the_repository_is_refused(tmp_path):
    write_files(tmp_path / "repos" / "app", {"app.py": "X = 1\n"})
    toml = (
        'summary = "s"\nprompt = "p"\ncheck = "true"\nrepo = "app"\n\n'
        '[[breaks]]\npath = "app.py"\nfixed = "X = 2"\nbroken = "X = 3"\n'
    )
    write_files(tmp_path / "task", {"task.toml": toml})
    with pytest.raises(ValueError, match="not once in app.py"):
        load_task(tmp_path / "task")
    write_files(
        tmp_path / "task", {"task.toml": toml.replace('fixed = "X = 2"', 'fixed = "X = 1"')}
    )
    task = load_task(tmp_path / "task")
    assert (task.files, task.solution) == ({"app.py": "X = 3\n"}, {"app.py": "X = 1\n"})


def test_set_medium_loads_the_medium_tasks_and_aider_finds_their_files_itself():
    options = parse_options(["--set", "medium", "--model", "openai/m", "--api-base", "http://x/v1"])
    assert [task.name for task in options.tasks] == [task.name for task in TASKS]
    assert not options.give_files
    assert parse_options(["--model", "openai/m"]).give_files  # the small set gives them


def test_peers_on_the_embedded_model_make_every_mode_share_one_server():
    options = parse_options(["--modes", "keel,mini-swe-agent"])
    assert options.settings.api_base is None and options.shared_server
    assert not parse_options(["--modes", "one-shot,keel"]).shared_server  # keel's worker, as before
    options = parse_options(
        ["--modes", "aider-whole,aider-diff,mini-swe-agent", "--api-base", "http://x/v1"]
        + ["--model", "openai/m"]
    )
    assert options.modes == ["aider-whole", "aider-diff", "mini-swe-agent"]
    assert not options.shared_server  # the server given is the shared one
