"""Run the checks on a task's changed files: syntax, lint (keel's lint engine, in its jail) and the project's
tests (its known test command, else pytest on the tests that import a changed module), each as a typed result."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

from keel.agent.core.protocol import VerificationCheck
from keel.agent.core.verification.imports import missing_imports, python_files
from keel.agent.core.verification.related_tests import candidate_tests, importing_tests
from keel.agent.core.verification.syntax import syntax_errors
from keel.prompts import plural
from keel.tools.base import ToolContext, ToolError
from keel.tools.linting.linter_process import LinterJail
from keel.tools.linting.linters import lint
from keel.tools.linting.syntax_check import relative_path
from keel.tools.run_command import RunCommandArgs, RunCommandTool

MAX_OUTPUT = 3000  # characters of a failure's output the model is shown (the end of a test run's)
MAX_LINES = 30  # problems listed per check
# unused names are not mistakes the task must fix before it ends
HARMLESS_CODES = {"F401", "F841", "F811"}
PYTEST = "python3 -m pytest -q -x -p no:cacheprovider"
PYTEST_EXIT_NO_TESTS = "exit code 5"


def _names(files: list[str], limit: int = 3) -> str:
    shown = ", ".join(files[:limit])
    return shown + (f" and {len(files) - limit} more" if len(files) > limit else "")


def _listed(lines: list[str]) -> str:
    shown = lines[:MAX_LINES]
    more = [f"... {len(lines) - MAX_LINES} more"] if len(lines) > MAX_LINES else []
    return "\n".join([*shown, *more])


def _tail(text: str) -> str:
    """The end of a long output, where test runners put their summary."""
    return text if len(text) <= MAX_OUTPUT else "...\n" + text[-MAX_OUTPUT:]


def check_syntax(files: list[Path], root: Path) -> tuple[VerificationCheck, list[Path]]:
    """The syntax check, and the files that passed it (the ones worth linting)."""
    found = syntax_errors(files, root)
    clean = [path for path, errors in found.items() if not errors]
    if not found:
        return VerificationCheck(
            name="syntax", status="skipped", summary="no file it can check"
        ), []
    if errors := [error for file_errors in found.values() for error in file_errors]:
        broken = [relative_path(path, root) for path in found if path not in clean]
        summary = f"{plural(len(errors), 'syntax error')} in {_names(broken)}"
        return VerificationCheck(
            name="syntax", status="failed", summary=summary, output=_listed(errors)
        ), clean
    names = [relative_path(path, root) for path in found]
    return VerificationCheck(name="syntax", status="passed", summary=_names(names)), clean


async def check_lint(files: list[Path], ctx: ToolContext) -> VerificationCheck:
    """keel's lint engine on the files (ruff, eslint, shellcheck, … where installed), without the slow
    project-wide checks; unused imports and variables do not fail it."""
    if not files:
        return VerificationCheck(name="lint", status="skipped", summary="no file to lint")
    report = await lint(files, LinterJail.of(ctx))
    problems = [str(d) for d in report.diagnostics if d.code not in HARMLESS_CODES]
    names = _names([relative_path(path, ctx.root) for path in report.files])
    if problems:
        return VerificationCheck(
            name="lint",
            status="failed",
            summary=f"{plural(len(problems), 'problem')} in {names}",
            output=_listed(problems),
        )
    notes = f" ({'; '.join(report.notes)})" if report.notes else ""
    return VerificationCheck(name="lint", status="passed", summary=f"{names}{notes}")


def check_imports(ctx: ToolContext, changed: list[str]) -> VerificationCheck:
    """The project's Python files still find every name they import from a changed module."""
    if not any(rel.endswith(".py") for rel in changed):
        return VerificationCheck(name="imports", status="skipped", summary="no Python file changed")
    problems = missing_imports(ctx.root, changed, python_files(ctx.root))
    if problems:
        return VerificationCheck(
            name="imports",
            status="failed",
            summary=f"{plural(len(problems), 'name')} imported but not defined",
            output=_listed(problems),
        )
    return VerificationCheck(name="imports", status="passed", summary="what other files import")


def command_for_tests(ctx: ToolContext, changed: list[str], known: str | None) -> str | None:
    """The project's test command when known, else pytest on the tests importing a changed module."""
    if known:
        return known
    tests = importing_tests(ctx.root, changed, candidate_tests(ctx.root))
    return f"{PYTEST} {shlex.join(tests)}" if tests else None


async def check_tests(
    ctx: ToolContext, command: str | None, may_run: bool, timeout: int
) -> VerificationCheck:
    """The test command, run the way run_command runs one (its sandbox, its process group, its timeout)."""
    if command is None:
        return VerificationCheck(
            name="tests", status="skipped", summary="no test command and no test imports the change"
        )
    if not may_run:
        return VerificationCheck(
            name="tests", status="skipped", summary=f"`{command}` needs approval to run commands"
        )
    try:
        # no bytecode written: a module rewritten within the second its .pyc was made would run stale
        fresh = f"export PYTHONDONTWRITEBYTECODE=1\n{command}"
        result = await RunCommandTool().run(RunCommandArgs(command=fresh, timeout=timeout), ctx)
    except ToolError as exc:
        return VerificationCheck(name="tests", status="skipped", summary=f"`{command}`: {exc}")
    if command.startswith(PYTEST) and not result.ok:
        if "No module named pytest" in result.output:
            return VerificationCheck(
                name="tests", status="skipped", summary="pytest is not installed"
            )
        if PYTEST_EXIT_NO_TESTS in result.output:
            return VerificationCheck(name="tests", status="skipped", summary="no tests collected")
    if not result.ok:
        return VerificationCheck(
            name="tests",
            status="failed",
            summary=f"`{command}` failed",
            output=_tail(result.output),
        )
    return VerificationCheck(name="tests", status="passed", summary=f"`{command}` passed")


async def run_checks(
    ctx: ToolContext, changed: list[str], test_command: str | None, may_run: bool, timeout: int
) -> list[VerificationCheck]:
    """Every check of the changed files (workspace-relative; files since deleted only count for the tests)."""
    files = [ctx.root / rel for rel in changed if (ctx.root / rel).is_file()]
    syntax, clean = await asyncio.to_thread(check_syntax, files, ctx.root)
    checks = [
        syntax,
        await check_lint(clean, ctx),
        await asyncio.to_thread(check_imports, ctx, changed),
    ]
    if syntax.status == "failed":  # the tests could only fail the same way
        checks.append(
            VerificationCheck(
                name="tests", status="skipped", summary="not run: syntax errors first"
            )
        )
        return checks
    command = await asyncio.to_thread(command_for_tests, ctx, changed, test_command)
    checks.append(await check_tests(ctx, command, may_run, timeout))
    return checks
