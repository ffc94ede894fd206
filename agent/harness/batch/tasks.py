"""The tasks file of `keel batch`: one JSON object per line, checked up front with errors naming the line."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from keel.agent.core.api.git import WorkspaceError, check_writable, repo_top, resolve_ref
from keel.agent.core.errors import UsageError


class TaskFileError(UsageError):
    """The tasks file cannot be used as given (exit 2); the message names the file and line."""


class Task(BaseModel):
    """One line of TASKS.jsonl."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, description="unique name of the task")
    prompt: str = Field(min_length=1, description="what the agent is asked to do")
    repo: Path = Field(
        default=Path("."), description="the git repository to work in (relative: to the cwd)"
    )
    ref: str | None = Field(
        default=None, description="branch, tag or commit to start from (default HEAD)"
    )
    setup: list[str] = Field(
        default_factory=list, description="shell commands run in the worktree first"
    )
    test: str | None = Field(
        default=None, description="shell command whose exit code decides pass (0) or fail"
    )
    budget: int | None = Field(default=None, gt=0, description="token budget of each attempt")
    model: str | None = Field(default=None, description="litellm model name, overriding --model")

    @field_validator("setup", mode="before")
    @classmethod
    def _one_command_is_a_list(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


def _describe(error: ValidationError) -> str:
    item = error.errors()[0]
    field = ".".join(str(part) for part in item["loc"]) or "the line"
    if item["type"] == "extra_forbidden":
        return f"unknown field {field!r}; fields are: {', '.join(Task.model_fields)}"
    if item["type"] == "missing":
        return f"missing required field {field!r}"
    return f"bad value for {field!r}: {item['msg']}"


def parse_task(line: str, cwd: Path) -> Task:
    """One task from its JSON line, its repo made absolute; ValueError/TypeError say what is wrong."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(raw, dict):
        raise TypeError(f"expected a JSON object, got {type(raw).__name__}")
    try:
        task = Task.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(_describe(exc)) from None
    return task.model_copy(update={"repo": (cwd / task.repo).resolve()})


def _check_workspace(task: Task, checked: dict[tuple[Path, str | None], str]) -> Task:
    """The task's repo is a git working tree and its ref a commit; the repo becomes the tree's top level."""
    key = (task.repo, task.ref)
    if key not in checked:
        top = repo_top(task.repo)
        resolve_ref(top, task.ref)
        check_writable(top)
        checked[key] = str(top)
    return task.model_copy(update={"repo": Path(checked[key])})


def load_tasks(path: Path, cwd: Path) -> list[Task]:
    """Every task of the file, in order; TaskFileError names the first bad line and what would work."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TaskFileError(f"cannot read the tasks file {path}: {exc.strerror}") from None
    tasks: list[Task] = []
    first_line: dict[str, int] = {}
    checked: dict[tuple[Path, str | None], str] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            task = _check_workspace(parse_task(line, cwd), checked)
        except (ValueError, TypeError, WorkspaceError) as exc:
            raise TaskFileError(f"{path} line {number}: {exc}") from None
        if task.id in first_line:
            raise TaskFileError(
                f"{path} line {number}: duplicate id {task.id!r} (first used on line {first_line[task.id]}); "
                "each task needs its own id"
            )
        first_line[task.id] = number
        tasks.append(task)
    if not tasks:
        raise TaskFileError(
            f"{path} holds no tasks; write one JSON object per line, e.g. "
            '{"id": "fix-1", "prompt": "make the tests pass", "test": "pytest -q"}'
        )
    return tasks
