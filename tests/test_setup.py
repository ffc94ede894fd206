"""`keel setup` with the scripted model: recipes verified in fresh sandboxed worktrees, written down, used by
later sessions; a rejected proposal goes back to the model; a repository it cannot set up ends with a report."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from keel_cli import git_repo, run_keel
from setup_support import (
    NODE_RECIPE,
    NODE_REPO,
    PATH,
    PYPROJECT_RECIPE,
    PYPROJECT_REPO,
    REQUIREMENTS_RECIPE,
    REQUIREMENTS_REPO,
    propose,
)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def setup(server, repo: Path, home: Path, *args: str):
    return run_keel(
        "setup", "--model", "openai/any", "--api-base", server.url, *args,
        cwd=repo, home=home, timeout=300, PATH=PATH,
    )  # fmt: skip


def tool_results(request) -> list[str]:
    return [m["content"] for m in request.messages if m.get("role") == "tool"]


def worktrees(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, check=False
    )
    return out.stdout.splitlines()


@pytest.mark.parametrize(
    ("files", "recipe", "runner"),
    [
        (PYPROJECT_REPO, PYPROJECT_RECIPE, "pytest"),
        (REQUIREMENTS_REPO, REQUIREMENTS_RECIPE, "unittest"),
        pytest.param(
            NODE_REPO,
            NODE_RECIPE,
            "node --test",
            marks=pytest.mark.skipif(shutil.which("npm") is None, reason="needs node and npm"),
        ),
    ],
    ids=["pyproject-pytest", "requirements-unittest", "node-npm-test"],
)
def test_setup_writes_a_recipe_that_passed_its_own_rerun(
    tmp_path, scripted_server, files, recipe, runner
):
    repo = git_repo(tmp_path / "repo", files)
    server = scripted_server([propose(*recipe), "Set up: the tests run."])
    result = setup(server, repo, tmp_path / "home")
    assert result.returncode == 0, result.stderr
    verdict = tool_results(server.requests[1])[-1]
    assert verdict.startswith("Accepted: the recipe ran twice from scratch")
    assert f"({runner}" in verdict
    script = (repo / ".keel" / "setup.sh").read_text()
    assert all(command in script for command in recipe[0])
    config = tomllib.loads((repo / ".keel" / "config.toml").read_text())
    assert config["test_command"] == recipe[1]
    # the installs happened in worktrees that are gone: the checkout has only the recipe
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=False
    ).stdout.split("\n")
    assert [line for line in status if line] == ["?? .keel/"]
    assert not (repo / ".venv").exists() and not (repo / "node_modules").exists()
    assert len(worktrees(repo)) == 1
    # setup.sh installs for real, from the repository root
    done = subprocess.run(
        ["bash", ".keel/setup.sh"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": PATH},
    )
    assert done.returncode == 0, done.stderr


def test_a_test_command_that_collects_no_tests_is_rejected_with_the_reason(
    tmp_path, scripted_server
):
    repo = git_repo(tmp_path / "repo", PYPROJECT_REPO)
    server = scripted_server(
        [
            propose([], "PYTHONPATH=src python3 -m pytest -q -k no_such_test"),
            propose(*PYPROJECT_RECIPE),
            "done",
        ]
    )
    result = setup(server, repo, tmp_path / "home", "--print")
    assert result.returncode == 0, result.stderr
    rejected = tool_results(server.requests[1])[-1]
    assert rejected.startswith("Rejected (proposal 1 of 5)")
    assert "reported no tests" in rejected and "1 deselected" in rejected
    assert tool_results(server.requests[2])[-1].startswith("Accepted")
    assert PYPROJECT_RECIPE[1] in result.stdout
    assert not (repo / ".keel").exists()  # --print writes nothing


def test_a_repository_it_cannot_set_up_ends_with_a_report_and_exit_1(tmp_path, scripted_server):
    repo = git_repo(tmp_path / "repo", PYPROJECT_REPO)
    server = scripted_server(
        [
            propose(["python3 -m pip install --no-index no-such-package"], "python3 -m pytest -q"),
            propose([], "python3 -m pytest -q || true"),
            "I could not set it up.",
        ]
    )
    result = setup(server, repo, tmp_path / "home", "--attempts", "2")
    assert result.returncode == 1
    report = result.stderr[result.stderr.index("keel setup: no recipe passed") :]
    assert "2 tried" in report
    assert "1. install: python3 -m pip install --no-index no-such-package" in report
    assert "rejected: the install command `python3 -m pip install" in report
    assert "2. install: (nothing)" in report
    # without PYTHONPATH=src the test module fails to import, which `|| true` hides from the exit status
    assert (
        "rejected: the test command `python3 -m pytest -q || true` could not load the tests"
        in report
    )
    assert "That was the last proposal" in tool_results(server.requests[2])[-1]
    assert not (repo / ".keel").exists()
    assert len(worktrees(repo)) == 1
    logs = Path(report.split("The commands' output is in ")[1].split(";")[0])
    assert sorted(path.name for path in logs.iterdir()) == ["attempt-1-1.log", "attempt-2-1.log"]
    assert folders_in(tmp_path / "home" / "worktrees") == []
    branches = subprocess.run(
        ["git", "branch"], cwd=repo, capture_output=True, text=True, check=False
    )
    assert branches.stdout.split() == ["*", "main"]


def folders_in(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_dir()] if root.exists() else []


def test_a_setup_that_ran_no_command_names_no_output_folder_and_leaves_none(
    tmp_path, scripted_server
):
    repo = git_repo(tmp_path / "repo", PYPROJECT_REPO)
    server = scripted_server(["I cannot tell how to set it up.", "Still no idea."])
    home = tmp_path / "home"
    result = setup(server, repo, home)
    assert result.returncode == 1, result.stderr
    assert "keel setup: the model proposed no recipe." in result.stderr
    assert "No install or test command ran; nothing was installed." in result.stderr
    assert "output is in" not in result.stderr
    assert not (home / "setup").exists()
    assert folders_in(home / "worktrees") == [], "no empty worktree folder is left behind"
    assert len(worktrees(repo)) == 1


def test_later_sessions_are_told_the_verified_test_command(tmp_path, scripted_server):
    repo = git_repo(tmp_path / "repo", PYPROJECT_REPO)
    setup_server = scripted_server([propose(*PYPROJECT_RECIPE), "done"])
    assert setup(setup_server, repo, tmp_path / "home").returncode == 0
    server = scripted_server(["hello"])
    result = run_keel(
        "run", "--model", "openai/any", "--api-base", server.url, "say hello",
        cwd=repo, home=tmp_path / "home",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    system = server.requests[0].messages[0]["content"]
    assert f"Tests: `{PYPROJECT_RECIPE[1]}` runs them (verified by keel setup" in system
