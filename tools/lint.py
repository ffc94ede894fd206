"""The `lint` tool: the project's linters and tree-sitter syntax checks on the files changed."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field

from keel.prompts import plural
from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.exec.git_safety import git_environment, hardened_args, in_nested_repository
from keel.tools.linting.linter_process import LinterJail
from keel.tools.linting.linters import LintReport, is_lintable, lint

MAX_SHOWN = 100
MAX_FILES = 1000
SKIPPED_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", "target", ".tox", "dist"}


class LintArgs(ToolArgs):
    paths: list[str] | None = Field(
        default=None,
        description="Files or directories to check, relative to the workspace root. "
        "Omit to check the files changed in this session.",
    )


def _walk(directory: Path) -> list[Path]:
    """Every file under a directory, leaving out VCS, dependency, build and hidden directories."""
    found: list[Path] = []
    for current, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        found.extend(Path(current) / name for name in sorted(names))
    return found


async def _git_files(directory: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files under a directory; None outside a git repo."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            *hardened_args(["ls-files", "-z", "--cached", "--others", "--exclude-standard"]),
            cwd=directory,
            env=git_environment(os.environ),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
    except (OSError, TimeoutError):
        return None
    if proc.returncode != 0:
        return None
    names = [name for name in out.decode(errors="replace").split("\0") if name]
    return [directory / name for name in names if not SKIPPED_DIRS.intersection(Path(name).parts)]


async def expand_directory(directory: Path, root: Path) -> list[Path]:
    """The lintable files in a directory, honouring .gitignore when it is in the workspace's git
    repo (git never runs in a repository nested in `root`: its config would pick programs)."""
    listed = None if in_nested_repository(directory, root) else await _git_files(directory)
    files = listed or _walk(directory)
    return sorted(path for path in files if is_lintable(path) and path.is_file())


def _names(paths: list[Path], ctx: ToolContext, limit: int = 5) -> str:
    shown = ", ".join(ctx.relative(path) for path in paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def format_report(report: LintReport, notes: list[str]) -> str:
    """`path:line:col: message` lines, capped, with a count and whatever could not be checked."""
    files = plural(len(report.files), "file")
    problems = report.diagnostics
    if not problems:
        lines = [f"No problems found in {files}."]
    else:
        with_problems = len({d.path for d in problems})
        lines = [f"{plural(len(problems), 'problem')} in {with_problems} of {files}:"]
        lines += [str(d) for d in problems[:MAX_SHOWN]]
        if len(problems) > MAX_SHOWN:
            cut = len(problems) - MAX_SHOWN
            lines.append(f"... {cut} more not shown; lint fewer paths to see them.")
    lines += [f"Note: {note}" for note in [*notes, *report.notes]]
    return "\n".join(lines)


class LintTool(Tool[LintArgs]):
    name = "lint"
    kind = ToolKind.READ
    description = (
        "Check files for errors: ruff for Python; eslint, go vet, cargo check, shellcheck when the "
        "project has them; syntax errors in every other supported language. Prints "
        "`path:line:col: message` lines. Without `paths` it checks the files you changed."
    )
    Args = LintArgs

    async def run(self, args: LintArgs, ctx: ToolContext) -> ToolResult:
        notes: list[str] = []
        if not args.paths:
            changed = sorted(path for path in ctx.changed_files if path.is_file())
            files = [path for path in changed if is_lintable(path)]
            if not files:
                if changed:
                    names = _names(changed, ctx)
                    what = f"none of the files changed in this session ({names}) can be linted"
                else:
                    what = "no files have been changed in this session"
                return ToolResult(
                    output=(
                        f"Nothing to lint by default: {what}. Pass paths, e.g. "
                        '{"paths": ["src"]}, to lint files or directories.'
                    )
                )
        else:
            files, notes = await self._files_for(args.paths, ctx)
        if len(files) > MAX_FILES:
            notes.append(f"checked the first {MAX_FILES} of {len(files)} files; narrow the paths")
            files = files[:MAX_FILES]
        report = await lint(files, LinterJail.of(ctx), project_checks=True)
        return ToolResult(output=format_report(report, notes))

    async def _files_for(self, paths: list[str], ctx: ToolContext) -> tuple[list[Path], list[str]]:
        files: list[Path] = []
        unsupported: list[Path] = []
        for raw in paths:
            path = ctx.resolve(raw)
            if path.is_dir():
                files.extend(await expand_directory(path, ctx.root))
            elif path.is_file():
                (files if is_lintable(path) else unsupported).append(path)
            else:
                raise ToolError(
                    f"{raw!r} does not exist; pass existing files or directories "
                    "relative to the workspace root"
                )
        files = list(dict.fromkeys(files))
        notes = [f"no checks exist for {ctx.relative(path)}" for path in unsupported]
        if not files:
            raise ToolError(
                f"none of {paths} holds a file that can be linted; supported are Python, "
                "JavaScript/TypeScript, Go, Rust, Java, C/C++, Ruby, shell, JSON and TOML files"
            )
        return files, notes
