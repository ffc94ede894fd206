"""`keel bench new`: a Harbor task from a real commit. The environment is `keel setup` run at the commit's
parent, the tests are the commit's test changes, the solution its other changes, the instruction written
tersely by the model from the commit."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from keel.agent.core.api.git import NEUTRAL_CONFIG, Git, GitError
from keel.agent.core.errors import UsageError
from keel.agent.core.protocol import AnyEvent, TaskFinished, UserPrompt
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.harness.setup.harbor import TaskParts, write_task
from keel.agent.harness.setup.task import SetupOptions, SetupOutcome, run_setup
from keel.prompts import render

DIFF_SHOWN = 12_000
_TEST_DIRS = {"tests", "test", "__tests__", "spec"}
_TEST_NAME = re.compile(r"^(test_.*\.py|.*_test\.py|.*\.(test|spec)\.[cm]?[jt]sx?)$")


class CommitTask(BaseModel):
    """The task written, or the setup that failed (then `task` is None)."""

    task: Path | None
    setup: SetupOutcome


def is_test_file(path: str) -> bool:
    """Whether a changed file belongs to the tests: under tests/ (test/, __tests__/, spec/) or named like one."""
    parts = PurePosixPath(path).parts
    return any(part in _TEST_DIRS for part in parts[:-1]) or bool(_TEST_NAME.match(parts[-1]))


def commit_parts(repo: Path, commit: str) -> tuple[str, TaskParts, list[str], str]:
    """The parent, the task's parts but its instruction, the non-test files, and the commit's message."""
    git = Git(repo, config=NEUTRAL_CONFIG, where=f"in {repo}")
    try:
        sha = git.text("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
        parent = git.text("rev-parse", "--verify", "--quiet", f"{sha}^")
    except GitError:
        raise UsageError(
            f"{commit!r} is not a commit with a parent in {repo}; name one with --commit"
        ) from None
    changed = git.text("diff", "--name-only", "--no-renames", parent, sha).splitlines()
    tests = [path for path in changed if is_test_file(path)]
    code = [path for path in changed if not is_test_file(path)]
    present = set(git.text("ls-tree", "-r", "--name-only", sha).splitlines())
    test_files = {path: git.binary("show", f"{sha}:{path}") for path in tests if path in present}
    if not test_files:
        raise UsageError(
            f"commit {sha[:12]} adds or changes no tests (files under tests/ or named test_*.py): "
            "a task needs tests that check the change; choose a commit that has them"
        )
    if not code:
        raise UsageError(
            f"commit {sha[:12]} changes only tests: there is nothing for an agent to do"
        )
    patch = git.binary("diff", "--binary", "--no-renames", parent, sha, "--", *code)
    message = git.text("log", "-1", "--format=%B", sha)
    return (
        parent,
        TaskParts(instruction="", test_files=test_files, solution_patch=patch),
        code,
        message,
    )


async def write_instruction(
    settings: SessionSettings, message: str, files: list[str], patch: bytes
) -> str:
    """The model's terse instruction (the commit's subject when it gives none)."""
    diff = patch.decode("utf-8", "replace")
    if len(diff) > DIFF_SHOWN:
        diff = diff[:DIFF_SHOWN] + "\n[… cut]"
    prompt = render("bench_instruction", message=message.strip(), files=files, diff=diff)
    own = settings.model_copy(update={"checkpoints": False})
    final = ""
    async with Session(own, tools=[]) as session:
        session.submit(UserPrompt(text=prompt))
        async for event in session.events():
            if isinstance(event, TaskFinished):
                final = event.final_message
                break
    return final.strip() or message.strip().splitlines()[0]


async def new_commit_task(
    settings: SessionSettings,
    repo: Path,
    commit: str,
    out: Path,
    options: SetupOptions,
    on_event: Callable[[AnyEvent], None] | None = None,
) -> CommitTask:
    """Set up the repository at the commit's parent, then write the task into `out`."""
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty; choose a new folder with --out")
    parent, parts, code, message = commit_parts(repo, commit)
    setup = await run_setup(settings, repo, parent, options, on_event)
    if setup.recipe is None:
        return CommitTask(task=None, setup=setup)
    instruction = await write_instruction(settings, message, code, parts.solution_patch)
    parts = parts.model_copy(update={"instruction": instruction})
    task = write_task(out, repo, parent, setup.recipe, parts, options.command_timeout)
    return CommitTask(task=task, setup=setup)
