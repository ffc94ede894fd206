"""A verified recipe as a Harbor task: environment/Dockerfile (WORKDIR, COPY, RUN: the subset keel's local
environment builds) with the repository beside it, tests/test.sh running the test command, task.toml; a
task made from a commit adds the commit's tests, its instruction and solution/solve.sh applying its diff."""

from __future__ import annotations

import io
import json
import shlex
import tarfile
from pathlib import Path

from pydantic import BaseModel, Field

from keel.agent.core.api.git import NEUTRAL_CONFIG, Git
from keel.agent.harness.setup.verify import Recipe

WORKDIR = "/app"
TEST_FILES = "files"  # tests/files/ holds the commit's test files, copied over the workspace
SOLUTION_PATCH = "solution.patch"


class TaskParts(BaseModel):
    """What a commit adds to the environment: the instruction, its test files, and its non-test diff."""

    instruction: str
    test_files: dict[str, bytes] = Field(default_factory=dict)
    solution_patch: bytes = b""
    category: str = "commit"


def _base_image(recipe: Recipe) -> str:
    words = " ".join([*recipe.install, recipe.test]).split()
    node = any(word in ("npm", "npx", "node", "yarn", "pnpm") for word in words)
    return "node:20-bookworm" if node else "python:3.11-slim"


def _run_line(command: str) -> str:
    if "\n" in command:
        return "RUN " + json.dumps(["bash", "-c", command])
    return f"RUN {command}"


def dockerfile(recipe: Recipe) -> str:
    """FROM, WORKDIR, the repository copied in, then each install command."""
    lines = [f"FROM {_base_image(recipe)}", f"WORKDIR {WORKDIR}", f"COPY repo/ {WORKDIR}/"]
    lines += [_run_line(command) for command in recipe.install]
    return "\n".join(lines) + "\n"


def test_script(recipe: Recipe, with_files: bool) -> str:
    """Copy the task's test files in (if any), run the test command, reward 1 when it exits 0."""
    lines = ["#!/bin/bash", "mkdir -p /logs/verifier", f"cd {WORKDIR}"]
    if with_files:
        lines.append(f"cp -a /tests/{TEST_FILES}/. {WORKDIR}/")
    lines += [
        recipe.test,
        "status=$?",
        'if [ "$status" -eq 0 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt',
    ]
    return "\n".join(lines) + "\n"


def task_toml(category: str, timeout: float) -> str:
    return (
        'version = "1.0"\n\n[metadata]\n'
        f'category = "{category}"\n\n'
        f"[verifier]\ntimeout_sec = {timeout:.1f}\n\n"
        f"[agent]\ntimeout_sec = {max(timeout, 600.0):.1f}\n\n"
        f'[environment]\nbuild_timeout_sec = {timeout:.1f}\nworkdir = "{WORKDIR}"\n'
    )


def _export(repo: Path, commit: str, target: Path) -> None:
    """The commit's files (no .git) into `target`."""
    archive = Git(repo, config=NEUTRAL_CONFIG).binary("archive", "--format=tar", commit)
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")


def write_task(
    out: Path, repo: Path, commit: str, recipe: Recipe, parts: TaskParts | None, timeout: float
) -> Path:
    """Write the task folder `out` (which must not exist yet, or be empty); returns it."""
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty; choose a new folder for the task")
    _export(repo, commit, out / "environment" / "repo")
    files = {
        "environment/Dockerfile": dockerfile(recipe),
        "tests/test.sh": test_script(recipe, bool(parts and parts.test_files)),
        "task.toml": task_toml(parts.category if parts else "setup", timeout),
        "instruction.md": (parts.instruction if parts else _placeholder(recipe)).strip() + "\n",
    }
    if parts and parts.solution_patch:
        files["solution/solve.sh"] = (
            f"#!/bin/bash\nset -e\ncd {WORKDIR}\n"
            f"git apply --whitespace=nowarn /solution/{SOLUTION_PATCH}\n"
        )
    for relative, text in files.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if parts:
        if parts.solution_patch:
            (out / "solution" / SOLUTION_PATCH).write_bytes(parts.solution_patch)
        for relative, data in parts.test_files.items():
            path = out / "tests" / TEST_FILES / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    for script in ("tests/test.sh", "solution/solve.sh"):
        if (out / script).is_file():
            (out / script).chmod(0o755)
    return out


def _placeholder(recipe: Recipe) -> str:
    return (
        "Describe the task here. The environment is this repository, installed; "
        f"the tests pass when `{shlex.quote(recipe.test)}` exits 0."
    )
