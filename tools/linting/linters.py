"""The lint engine: real linters where installed, tree-sitter syntax errors as the fallback, and
which problems an edit introduced.

Ruff runs with our own rule selection (syntax errors, pyflakes, pylint errors: mistakes, not style);
the repo's ruff config is still read for the rest (builtins, per-file-ignores, target-version) and
if it is broken ruff re-runs `--isolated`. Fixes are never applied.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from keel.tools.linting.linter_process import (
    FAST_TIMEOUT,
    CheckOutcome,
    LinterFailed,
    LinterJail,
    first_line,
    run_process,
)
from keel.tools.linting.linters_compiled import check_cargo, check_go_vet, check_gofmt
from keel.tools.linting.syntax_check import Diagnostic, can_check, relative_path, syntax_problems

RUFF_SELECT = "F,E9,PLE"
# Star-import bookkeeping and placeholder-less f-strings are harmless: noise for an agent.
RUFF_IGNORE = "F403,F405,F541"

PYTHON_SUFFIXES = {".py", ".pyi"}
JS_SUFFIXES = {".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"}
SHELL_SUFFIXES = {".sh", ".bash"}
ESLINT_CONFIGS = [
    *(f"eslint.config.{ext}" for ext in ("js", "mjs", "cjs", "ts", "mts", "cts")),
    *(f".eslintrc{ext}" for ext in ("", ".js", ".cjs", ".yaml", ".yml", ".json")),
]


@dataclass
class LintReport:
    """What a lint run found, which files it looked at, and which linters could not run."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- ruff -----------------------------------------------------------------------------------------


def ruff_command() -> list[str]:
    """The ruff next to our interpreter, else one on PATH, else `python -m ruff`."""
    beside = Path(sys.executable).parent / "ruff"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("ruff")
    return [found] if found else [sys.executable, "-m", "ruff"]


async def check_ruff(files: list[Path], root: Path, jail: LinterJail) -> CheckOutcome:
    base = [
        *ruff_command(),
        "check",
        "--output-format",
        "json",
        "--no-cache",
        "--no-fix",
        "--select",
        RUFF_SELECT,
        "--ignore",
        RUFF_IGNORE,
    ]
    result = await run_process(jail, [*base, *map(str, files)], root, FAST_TIMEOUT)
    if result.returncode not in (0, 1):  # 2: the repo's config is broken or ruff itself failed
        result = await run_process(
            jail, [*base, "--isolated", *map(str, files)], root, FAST_TIMEOUT
        )
    if result.returncode not in (0, 1):
        raise LinterFailed(f"ruff failed: {first_line(result.stderr)}")
    try:
        items = json.loads(result.stdout or "[]")
    except json.JSONDecodeError:
        raise LinterFailed(f"ruff printed no JSON: {first_line(result.stdout)}") from None
    diagnostics = []
    for item in items:
        code, message = item.get("code") or "", item.get("message", "")
        if code in ("", "invalid-syntax") or message.startswith("SyntaxError"):
            code = ""
            message = "syntax error: " + message.removeprefix("SyntaxError: ")
        location = item.get("location") or {}
        diagnostics.append(
            Diagnostic(
                path=relative_path(Path(item.get("filename", "")), root),
                line=location.get("row", 1),
                col=location.get("column", 1),
                message=message,
                code=code,
                source="ruff",
            )
        )
    return CheckOutcome(diagnostics, set(files))


# --- eslint ---------------------------------------------------------------------------------------


def _has_eslint_config(root: Path) -> bool:
    if any((root / name).is_file() for name in ESLINT_CONFIGS):
        return True
    try:
        return "eslintConfig" in json.loads((root / "package.json").read_text())
    except (OSError, ValueError, TypeError):
        return False


def _eslint_binary(root: Path) -> str | None:
    local = root / "node_modules" / ".bin" / "eslint"
    return str(local) if local.is_file() else shutil.which("eslint")


async def check_eslint(files: list[Path], root: Path, jail: LinterJail) -> CheckOutcome:
    """eslint's errors (not warnings), only where the project configured eslint."""
    binary = _eslint_binary(root)
    if binary is None or not _has_eslint_config(root):
        return CheckOutcome()
    result = await run_process(
        jail, [binary, "--format", "json", "--no-color", *map(str, files)], root, FAST_TIMEOUT
    )
    try:
        reports = json.loads(result.stdout)
    except json.JSONDecodeError:
        reason = first_line(result.stderr or result.stdout)
        raise LinterFailed(f"eslint failed: {reason}") from None
    outcome = CheckOutcome()
    for report in reports:
        path = Path(report.get("filePath", ""))
        messages = report.get("messages", [])
        if any(
            "ignore" in m.get("message", "") and not m.get("ruleId") and not m.get("fatal")
            for m in messages
        ):
            continue  # eslint skipped the file: it did not parse it either
        outcome.syntax_checked.add(path)
        for m in messages:
            if m.get("severity") == 2 or m.get("fatal"):
                outcome.diagnostics.append(
                    Diagnostic(
                        path=relative_path(path, root),
                        line=m.get("line") or 1,
                        col=m.get("column") or 1,
                        message=m.get("message", ""),
                        code=m.get("ruleId") or "",
                        source="eslint",
                    )
                )
    return outcome


# --- shell ----------------------------------------------------------------------------------------

_BASH_ERROR = re.compile(r"^.*?: line (\d+): (.*)$")


async def _bash_n(path: Path, root: Path, jail: LinterJail) -> list[Diagnostic]:
    result = await run_process(jail, ["bash", "-n", str(path)], root, FAST_TIMEOUT)
    diagnostics = []
    for line in result.stderr.splitlines():
        if match := _BASH_ERROR.match(line):
            diagnostics.append(
                Diagnostic(
                    path=relative_path(path, root),
                    line=int(match[1]),
                    col=1,
                    message=match[2],
                    source="bash",
                )
            )
    return diagnostics


async def check_shell(files: list[Path], root: Path, jail: LinterJail) -> CheckOutcome:
    """`bash -n` for syntax, shellcheck (warnings and errors) when it is installed."""
    outcome = CheckOutcome()
    if shutil.which("bash"):
        for found in await asyncio.gather(*(_bash_n(path, root, jail) for path in files)):
            outcome.diagnostics.extend(found)
        outcome.syntax_checked.update(files)
    shellcheck = shutil.which("shellcheck")
    if shellcheck:
        argv = [shellcheck, "-f", "json", "--severity=warning", *map(str, files)]
        result = await run_process(jail, argv, root, FAST_TIMEOUT)
        try:
            items = json.loads(result.stdout or "[]")
        except json.JSONDecodeError:
            outcome.note = f"shellcheck failed: {first_line(result.stderr)}"
            items = []
        for item in items:
            if "syntax error" in item.get("message", "").lower() and outcome.syntax_checked:
                continue  # bash -n already said it
            outcome.diagnostics.append(
                Diagnostic(
                    path=relative_path(Path(root / item.get("file", "")), root),
                    line=item.get("line", 1),
                    col=item.get("column", 1),
                    message=item.get("message", ""),
                    code=f"SC{item['code']}" if item.get("code") else "",
                    source="shellcheck",
                )
            )
    return outcome


# --- the engine -----------------------------------------------------------------------------------

Checker = Callable[[list[Path], Path, LinterJail], Awaitable[CheckOutcome]]


def _suffix_in(suffixes: set[str]) -> Callable[[Path], bool]:
    return lambda path: path.suffix.lower() in suffixes


EDIT_CHECKERS: list[tuple[str, Callable[[Path], bool], Checker]] = [
    ("ruff", _suffix_in(PYTHON_SUFFIXES), check_ruff),
    ("eslint", _suffix_in(JS_SUFFIXES), check_eslint),
    ("shell", _suffix_in(SHELL_SUFFIXES), check_shell),
    ("gofmt", _suffix_in({".go"}), check_gofmt),
]
PROJECT_CHECKERS: list[tuple[str, Callable[[Path], bool], Checker]] = [
    ("go vet", _suffix_in({".go"}), check_go_vet),
    ("cargo check", _suffix_in({".rs"}), check_cargo),
]


def is_lintable(path: Path) -> bool:
    """Whether any check here reads this kind of file (every linter's files have a grammar too)."""
    return can_check(path)


def _fallback(
    files: list[Path], syntax_checked: set[Path], root: Path, notes: list[str]
) -> list[Diagnostic]:
    found = []
    for path in files:
        try:
            found += syntax_problems(path, root, use_tree_sitter=path not in syntax_checked)
        except Exception as exc:  # noqa: BLE001 - a broken grammar wheel must not break the edit that ran us
            notes.append(f"syntax check of {relative_path(path, root)} failed: {exc}")
    return found


async def lint(paths: list[Path], jail: LinterJail, *, project_checks: bool = False) -> LintReport:
    """Every check that applies to the files, each in the jail; `project_checks` adds the slow crate-level ones."""
    root = Path(os.path.realpath(jail.root))
    files = list(dict.fromkeys(Path(os.path.realpath(p)) for p in paths))
    files = [path for path in files if path.is_file()]
    report = LintReport(files=files)
    checkers = EDIT_CHECKERS + (PROJECT_CHECKERS if project_checks else [])
    jobs = []
    for name, wants, checker in checkers:
        if selected := [path for path in files if wants(path)]:
            jobs.append((name, checker(selected, root, jail)))
    outcomes = await asyncio.gather(*(run for _, run in jobs), return_exceptions=True)
    syntax_checked: set[Path] = set()
    for (name, _), outcome in zip(jobs, outcomes, strict=True):
        if isinstance(outcome, LinterFailed):
            report.notes.append(str(outcome))
        elif isinstance(outcome, Exception):
            report.notes.append(f"{name} failed: {type(outcome).__name__}: {outcome}")
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            report.diagnostics.extend(outcome.diagnostics)
            syntax_checked |= outcome.syntax_checked
            if outcome.note:
                report.notes.append(outcome.note)
    reported_lines = {(d.path, d.line) for d in report.diagnostics}
    fallback = await asyncio.to_thread(_fallback, files, syntax_checked, root, report.notes)
    report.diagnostics.extend(d for d in fallback if (d.path, d.line) not in reported_lines)
    report.diagnostics = sorted(set(report.diagnostics), key=Diagnostic.sort_key)
    return report


async def check_paths(paths: list[Path], jail: LinterJail) -> list[Diagnostic]:
    """The problems in these files, quickly enough to run after every edit."""
    return (await lint(paths, jail)).diagnostics


def introduced(before: list[Diagnostic], after: list[Diagnostic]) -> list[Diagnostic]:
    """The problems in `after` not already in `before`.

    Matched by (path, code, message) as a multiset, not by line, so that lines shifted by an edit
    do not make old problems look new."""
    remaining = Counter((d.path, d.code, d.message) for d in before)
    new = []
    for diagnostic in after:
        key = (diagnostic.path, diagnostic.code, diagnostic.message)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            new.append(diagnostic)
    return new
