"""The small-model benchmark's tasks: read from bench/small_model_tasks/, laid out in folders, checked.

Two sets: `small` (bench/small_model_tasks/) and `medium` (bench/small_model_tasks_medium/, repositories
too large to paste). A task is a folder: `task.toml` (summary, prompt, check), `files/` (what the agent starts from), `check/`
(copied in only after the agent stops, so it never sees them) and `solution/` (the files a reference
solution replaces or adds, which proves the check can pass).

A medium task names instead a repository under `repos/` beside it (`repo = "ledger"`) and the breaks
that make its defect (`[[breaks]]`: a file, the text it has, the text the task starts with): the files
are that repository with the breaks made, the reference solution the repository as written. Several
tasks share one repository, as issues of one project do.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

TASKS_DIR = Path(__file__).resolve().parent / "small_model_tasks"
MEDIUM_TASKS_DIR = Path(__file__).resolve().parent / "small_model_tasks_medium"
TASK_SETS = {"small": TASKS_DIR, "medium": MEDIUM_TASKS_DIR}  # --set's choices
CHECK_TIMEOUT = 120.0  # seconds; every check runs in about one


class Break(BaseModel):
    """One change that makes a medium task's defect: `fixed` (once in `path`) becomes `broken`."""

    model_config = ConfigDict(extra="forbid")

    path: str
    fixed: str
    broken: str


class TaskSpec(BaseModel):
    """What `task.toml` holds."""

    model_config = ConfigDict(extra="forbid")

    summary: str
    prompt: str
    check: str  # a shell command, run in the workspace once the check files are in
    repo: str | None = None  # a repository under repos/, for a task made by breaking it
    breaks: list[Break] = []


class Task(BaseModel):
    """One task with its files read: relative POSIX path -> text."""

    name: str
    spec: TaskSpec
    files: dict[str, str]
    check_files: dict[str, str]
    solution: dict[str, str]


@dataclass
class CheckResult:
    """Whether the check command passed, and what it printed (for the transcripts of failures)."""

    passed: bool
    output: str


def read_tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` by its relative POSIX path (an absent folder is empty)."""
    if not folder.is_dir():
        return {}
    return {
        path.relative_to(folder).as_posix(): path.read_text()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def broken_repository(folder: Path, spec: TaskSpec) -> tuple[dict[str, str], dict[str, str]]:
    """(the files the task starts from, the reference solution) of a task made by breaking a
    repository under `repos/` beside its folder."""
    files = read_tree(folder.parent / "repos" / str(spec.repo))
    if not files:
        raise ValueError(f"{folder.name}: no repository repos/{spec.repo}")
    solution = {}
    for change in spec.breaks:
        text = files.get(change.path, "")
        if text.count(change.fixed) != 1:
            raise ValueError(f"{folder.name}: the text to break is not once in {change.path}")
        solution.setdefault(change.path, text)
        files[change.path] = text.replace(change.fixed, change.broken)
    return files, solution


def load_task(folder: Path) -> Task:
    """The task stored in `folder`."""
    spec = TaskSpec.model_validate(tomllib.loads((folder / "task.toml").read_text()))
    if spec.repo is not None:
        files, solution = broken_repository(folder, spec)
        return Task(
            name=folder.name,
            spec=spec,
            files=files,
            check_files=read_tree(folder / "check"),
            solution=solution,
        )
    return Task(
        name=folder.name,
        spec=spec,
        files=read_tree(folder / "files"),
        check_files=read_tree(folder / "check"),
        solution=read_tree(folder / "solution"),
    )


def task_names(root: Path = TASKS_DIR) -> list[str]:
    """The names of the stored tasks, sorted."""
    return sorted(path.parent.name for path in root.glob("*/task.toml"))


def load_tasks(names: list[str] | None = None, root: Path = TASKS_DIR) -> list[Task]:
    """The named tasks in the order given (all of them, sorted, when none are named)."""
    known = task_names(root)
    wanted = names or known
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ValueError(f"unknown task(s): {', '.join(unknown)}; known: {', '.join(known)}")
    return [load_task(root / name) for name in wanted]


def inside(root: Path, relative: str) -> Path:
    """`root / relative`, refusing a path that would leave `root` (a model's reply names the paths)."""
    target = (root / relative).resolve()
    if not target.is_relative_to(root.resolve()):
        raise ValueError(f"path outside the workspace: {relative}")
    return target


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write each file under `root`, creating folders as needed."""
    for relative, text in files.items():
        target = inside(root, relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def git_repo(root: Path, files: dict[str, str]) -> Path:
    """A real git repository at `root` with the files committed, as a developer's checkout would be."""
    write_files(root, files)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run([*git, *args], cwd=root, check=True, capture_output=True)
    return root


def tool_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment with this Python's folder first on PATH, so `python` is the one with pytest
    (for the checks and for the agent's own commands alike); pytest's settings from outside dropped,
    and its plugins not loaded (the tasks need none, and loading this venv's takes seconds)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env | (extra or {})


def run_check(task: Task, workspace: Path, timeout: float = CHECK_TIMEOUT) -> CheckResult:
    """Copy the check files in (over anything the agent wrote there) and run the check command."""
    write_files(workspace, task.check_files)
    try:
        done = subprocess.run(
            ["bash", "-c", task.spec.check],
            cwd=workspace,
            env=tool_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return CheckResult(False, f"the check timed out after {timeout:.0f} s")
    return CheckResult(done.returncode == 0, done.stdout + done.stderr)


def checks_cannot_run(python: str = sys.executable) -> str | None:
    """Why the checks cannot run with `python` (they are `python -m pytest` with the bench's own), or None: a
    bench whose every check fails for want of pytest would score every harness 0 and say nothing."""
    done = subprocess.run(
        [python, "-m", "pytest", "--version"],
        env=tool_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode == 0:
        return None
    return (
        f"the tasks' checks run `python -m pytest` with {python}, which has no pytest: run the bench "
        "with a Python that has it (keel installed with its test extra: pip install -e '.[test]')"
    )
