"""Harbor task folders: finding them (a task, or a folder of tasks) and loading one, with errors that say what to fix."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ValidationError

from keel.agent.core.errors import UsageError
from keel.agent.harness.bench.task_config import TaskConfig

CONFIG = "task.toml"
INSTRUCTION = "instruction.md"


class TaskFolderError(UsageError):
    """A folder named as a task cannot be used (exit 2); the message names the file and the fix."""


class BenchTask(BaseModel):
    """One Harbor task: instruction.md, task.toml, environment/, tests/test.sh, solution/solve.sh."""

    id: str
    path: Path
    instruction: str
    config: TaskConfig

    @property
    def environment_dir(self) -> Path:
        return self.path / "environment"

    @property
    def dockerfile(self) -> Path:
        return self.environment_dir / "Dockerfile"

    @property
    def tests_dir(self) -> Path:
        return self.path / "tests"

    @property
    def solution_dir(self) -> Path:
        return self.path / "solution"


def _describe(error: ValidationError) -> str:
    item = error.errors()[0]
    where = ".".join(str(part) for part in item["loc"]) or "the file"
    return f"{where}: {item['msg']}"


def load_task(path: Path) -> BenchTask:
    """The task in `path`; TaskFolderError says which file is missing or wrong."""
    path = path.resolve()
    missing = [name for name in (CONFIG, INSTRUCTION) if not (path / name).is_file()]
    if missing:
        raise TaskFolderError(
            f"{path} is not a Harbor task: it has no {' and no '.join(missing)} "
            "(a task folder holds instruction.md, task.toml, environment/, tests/test.sh, solution/solve.sh)"
        )
    try:
        raw = tomllib.loads((path / CONFIG).read_text(encoding="utf-8"))
        config = TaskConfig.model_validate(raw)
    except tomllib.TOMLDecodeError as exc:
        raise TaskFolderError(f"{path / CONFIG} is not valid TOML: {exc}") from None
    except ValidationError as exc:
        raise TaskFolderError(f"{path / CONFIG}: {_describe(exc)}") from None
    instruction = (path / INSTRUCTION).read_text(encoding="utf-8")
    if not instruction.strip():
        raise TaskFolderError(f"{path / INSTRUCTION} is empty: it is the prompt the agent gets")
    return BenchTask(id=path.name, path=path, instruction=instruction, config=config)


def find_tasks(paths: list[Path]) -> list[BenchTask]:
    """Every task named: a task folder itself, or each task folder directly inside a folder, by name."""
    tasks: list[BenchTask] = []
    for path in paths:
        if not path.is_dir():
            raise TaskFolderError(
                f"{path} is not a folder; name a Harbor task folder or a folder of them"
            )
        if (path / CONFIG).is_file():
            tasks.append(load_task(path))
            continue
        found = sorted(child for child in path.iterdir() if (child / CONFIG).is_file())
        if not found:
            raise TaskFolderError(
                f"{path} holds no Harbor task (no task.toml in it or in a folder inside it)"
            )
        tasks += [load_task(child) for child in found]
    seen: dict[str, Path] = {}
    for task in tasks:
        if task.id in seen and seen[task.id] != task.path:
            raise TaskFolderError(
                f"two tasks are named {task.id!r}: {seen[task.id]} and {task.path}; rename one"
            )
        seen[task.id] = task.path
    unique = {task.path: task for task in tasks}
    return list(unique.values())
