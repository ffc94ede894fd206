"""Stage 2: keel runs a proposed recipe in a fresh worktree and accepts it only when the test command reports
tests with an exit status that agrees, twice, each time from scratch."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from keel.agent.core.api.git import create_worktree, delete_branch_at, remove_worktree
from keel.agent.core.api.sandbox import SandboxPolicy
from keel.agent.harness.setup.sandboxed import CommandRun, run_sandboxed
from keel.agent.harness.setup.summary import TestCount, count_tests

SHOWN_OUTPUT = 1_500


class Recipe(BaseModel):
    """How to install a repository and run its tests, as the model proposed it."""

    install: list[str] = Field(default_factory=list)
    test: str
    notes: str = ""


class Trial(BaseModel):
    """One run of a recipe from scratch: each command's end, the tests counted, and the verdict."""

    runs: list[CommandRun] = Field(default_factory=list)
    tests: TestCount | None = None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


class Attempt(BaseModel):
    """One proposal and what became of it."""

    recipe: Recipe
    trials: list[Trial] = Field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return len(self.trials) == 2 and all(trial.ok for trial in self.trials)

    @property
    def reason(self) -> str:
        failed = next((trial for trial in self.trials if not trial.ok), None)
        return failed.problem if failed else ""


def _tail(text: str, limit: int = SHOWN_OUTPUT) -> str:
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def judge_test_run(run: CommandRun) -> tuple[TestCount | None, str]:
    """The tests a test command ran, and what is wrong with the run ('' when it proves the tests run)."""
    if run.timed_out:
        return None, f"the test command `{run.command}` timed out"
    if run.exit_code is None or run.exit_code < 0 or run.exit_code >= 126:
        return None, (
            f"the test command `{run.command}` did not run (exit status {run.exit_code}):\n"
            f"{_tail(run.output)}"
        )
    tests = count_tests(run.output)
    if tests is None or tests.collected == 0:
        return tests, (
            f"the test command `{run.command}` reported no tests (exit status {run.exit_code}); "
            "it must run the project's tests and print its runner's summary (pytest, unittest, "
            f"node --test, jest or mocha). Its output:\n{_tail(run.output)}"
        )
    if tests.broken:
        return tests, (
            f"the test command `{run.command}` could not load the tests (an import or collection "
            f"error: is the project installed, or on the path?):\n{_tail(run.output)}"
        )
    if run.exit_code == 0 and tests.failed:
        return tests, (
            f"the test command `{run.command}` exited 0 although {tests.failed} of "
            f"{tests.collected} tests failed: its exit status must say whether the tests pass"
        )
    if run.exit_code != 0 and not tests.failed:
        return tests, (
            f"the test command `{run.command}` exited {run.exit_code} although no test failed:\n"
            f"{_tail(run.output)}"
        )
    return tests, ""


class Verifier:
    """Runs proposals in fresh worktrees of `repo` at `commit`; keeps every attempt for the report."""

    def __init__(
        self,
        repo: Path,
        commit: str,
        policy: SandboxPolicy,
        logs: Path,
        timeout: float = 900.0,
        max_attempts: int = 5,
    ) -> None:
        self.repo, self.commit, self.policy, self.logs = repo, commit, policy, logs
        self.timeout, self.max_attempts = timeout, max_attempts
        self.attempts: list[Attempt] = []

    @property
    def accepted(self) -> Recipe | None:
        return next((a.recipe for a in self.attempts if a.accepted), None)

    @property
    def finished(self) -> bool:
        return self.accepted is not None or len(self.attempts) >= self.max_attempts

    async def verify(self, recipe: Recipe) -> Attempt:
        """Run the recipe from scratch; if it passes, once more in another new worktree."""
        attempt = Attempt(recipe=recipe)
        self.attempts.append(attempt)
        for run in (1, 2):
            trial = await self._trial(recipe, f"{len(self.attempts)}-{run}")
            attempt.trials.append(trial)
            if not trial.ok:
                if run == 2:
                    trial.problem = f"on the re-run from scratch: {trial.problem}"
                break
        return attempt

    async def _trial(self, recipe: Recipe, name: str) -> Trial:
        worktree = await create_worktree(self.repo, f"setup/{name}", self.commit)
        log = self.logs / f"attempt-{name}.log"
        trial = Trial()
        try:
            for command in recipe.install:
                run = await run_sandboxed(self.policy, worktree.path, command, self.timeout, log)
                trial.runs.append(run)
                if not run.ok:
                    trial.problem = f"the install command {run.describe()}:\n{_tail(run.output)}"
                    return trial
            run = await run_sandboxed(self.policy, worktree.path, recipe.test, self.timeout, log)
            trial.runs.append(run)
            trial.tests, trial.problem = judge_test_run(run)
            return trial
        finally:
            await remove_worktree(worktree)
            await delete_branch_at(worktree, worktree.base)
