"""`keel bench new`: a Harbor task from a real commit (keel setup's environment at its parent, its tests, its
diff as the solution, the model's instruction) that `keel bench check` passes; `keel setup --harbor` too."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from keel_cli import git_repo, run_keel
from setup_support import PATH, propose

from keel.agent.harness.setup.commit_task import is_test_file

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

BEFORE = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_add.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
RECIPE = (["python3 -m venv --without-pip .venv"], "python3 -m pytest -q")
INSTRUCTION = "Add sub(a, b) to calc.py: it returns a minus b."


def commit_sub(repo: Path) -> str:
    """A commit that adds sub() and its test."""
    (repo / "calc.py").write_text(BEFORE["calc.py"] + "\n\ndef sub(a, b):\n    return a - b\n")
    (repo / "tests" / "test_sub.py").write_text(
        "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "Add sub() and its test"], cwd=repo, check=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_bench_new_makes_a_task_from_a_commit_that_bench_check_passes(tmp_path, scripted_server):
    repo = git_repo(tmp_path / "repo", BEFORE)
    commit = commit_sub(repo)
    server = scripted_server([propose(*RECIPE), "done", INSTRUCTION])
    home, task = tmp_path / "home", tmp_path / "task"
    made = run_keel(
        "bench", "new", "--repo", str(repo), "--commit", commit, "--out", str(task),
        "--model", "openai/any", "--api-base", server.url,
        cwd=tmp_path, home=home, timeout=300, PATH=PATH,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert (task / "instruction.md").read_text().strip() == INSTRUCTION
    # the model saw the commit's message and its non-test diff, not the tests
    asked = next(
        m["content"] for m in server.requests[-1].messages if "Commit message" in str(m["content"])
    )
    assert "Add sub() and its test" in asked and "+def sub(a, b):" in asked
    assert "test_sub" not in asked
    assert (task / "tests" / "files" / "tests" / "test_sub.py").is_file()
    assert "def sub" not in (task / "environment" / "repo" / "calc.py").read_text()
    assert "+def sub" in (task / "solution" / "solution.patch").read_text()
    assert (
        "RUN python3 -m venv --without-pip .venv"
        in (task / "environment" / "Dockerfile").read_text()
    )
    checked = run_keel(
        "bench", "check", str(task), "--env", "local", "--out", str(tmp_path / "check"),
        cwd=tmp_path, home=home, timeout=300, PATH=PATH,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "1/1 tasks valid" in checked.stdout


def test_bench_new_refuses_a_commit_without_tests(tmp_path, scripted_server):
    repo = git_repo(tmp_path / "repo", BEFORE)
    (repo / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "swap"],
        cwd=repo,
        check=True,
    )
    server = scripted_server([])
    made = run_keel(
        "bench", "new", "--repo", str(repo), "--commit", "HEAD",
        "--model", "openai/any", "--api-base", server.url, cwd=tmp_path, home=tmp_path / "home",
    )  # fmt: skip
    assert made.returncode == 2
    assert "adds or changes no tests" in made.stderr
    assert server.requests == []


def test_setup_harbor_writes_a_task_environment_keel_bench_runs(tmp_path, scripted_server):
    repo = git_repo(tmp_path / "repo", BEFORE)
    server = scripted_server([propose(*RECIPE), "done"])
    home, task = tmp_path / "home", tmp_path / "env-task"
    made = run_keel(
        "setup", "--print", "--harbor", str(task), "--model", "openai/any", "--api-base", server.url,
        cwd=repo, home=home, timeout=300, PATH=PATH,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    ran = run_keel(
        "bench", str(task), "--agent", "nop", "--env", "local", "--out", str(tmp_path / "run"),
        cwd=tmp_path, home=home, timeout=300, PATH=PATH,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    rows = [
        json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    ]
    assert [row["reward"] for row in rows] == [1.0]  # the untouched environment's tests pass


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("tests/test_calc.py", True),
        ("pkg/tests/helpers.py", True),
        ("test_calc.py", True),
        ("src/calc_test.py", True),
        ("web/add.test.js", True),
        ("calc.py", False),
        ("testing.md", False),
        ("src/contest.py", False),
    ],
)
def test_which_changed_files_are_tests(path, test):
    assert is_test_file(path) is test
