"""The `find_files` tool: files matching a glob, gitignore-aware (ripgrep's walk), newest first."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field

from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.searching import ripgrep_runner
from keel.tools.searching.path_glob import GlobError, compile_glob
from keel.tools.searching.ripgrep_runner import Engine, RipgrepError

MAX_SHOWN = 200
MAX_SCANNED = 50_000  # beyond this the walk stops; the mtime order then covers only what was found


class FindFilesArgs(ToolArgs):
    pattern: str = Field(
        min_length=1,
        description="Glob for file paths, e.g. '**/*.py', '*.md', 'src/**/test_*.ts' or "
        "'conftest.py'. Without '/' it matches file names at any depth; with '/' it is matched "
        "against paths relative to `path`; '**' spans directories, '{a,b}' alternatives.",
    )
    path: str = Field(
        default=".", description="Directory to look in, relative to the workspace root."
    )


def _by_recency(directory: Path, paths: list[str]) -> list[str]:
    """Most recently modified first (ties by path); files that vanished meanwhile are left out."""
    stamped = []
    for path in paths:
        try:
            stamped.append((-os.stat(directory / path).st_mtime_ns, path))
        except OSError:
            continue
    return [path for _, path in sorted(stamped)]


class FindFilesTool(Tool[FindFilesArgs]):
    name = "find_files"
    kind = ToolKind.READ
    description = (
        "Find files by glob pattern, most recently modified first; paths relative to the workspace "
        "root. Respects .gitignore; skips hidden files unless the pattern or path names them "
        f"(e.g. '.github/**'). Shows at most {MAX_SHOWN} files."
    )
    Args = FindFilesArgs

    def __init__(self, engine: Engine = "auto") -> None:
        self.engine: Engine = engine

    async def run(self, args: FindFilesArgs, ctx: ToolContext) -> ToolResult:
        directory = ctx.resolve(args.path)
        if not directory.is_dir():
            what = "is a file" if directory.exists() else "does not exist"
            raise ToolError(
                f"{args.path!r} {what}; find_files needs a directory in the workspace as path "
                "(default '.', the workspace root)"
            )
        try:
            glob = compile_glob(args.pattern)
            listing = await ripgrep_runner.list_files(
                directory, ".", glob, limit=MAX_SCANNED, engine=self.engine
            )
        except (GlobError, RipgrepError) as exc:
            detail = str(exc).removeprefix("rg: ")
            raise ToolError(f"{detail}. Use a glob like '**/*.py' or 'src/*.{{ts,tsx}}'.") from None
        where = ctx.relative(directory)
        if not listing.paths:
            return ToolResult(output=_no_files(args.pattern, where, listing.timed_out))
        ordered = await asyncio.to_thread(_by_recency, directory, listing.paths)
        prefix = "" if where == "." else where + "/"
        count = (
            f"{len(ordered)}+" if listing.stopped_early or listing.timed_out else str(len(ordered))
        )
        noun = "file" if count == "1" else "files"
        place = "the workspace" if where == "." else where
        lines = [
            f"{count} {noun} matching {args.pattern!r} in {place} (most recently modified first):"
        ]
        lines += [prefix + path for path in ordered[:MAX_SHOWN]]
        notes = []
        if len(ordered) > MAX_SHOWN:
            notes.append(f"Showing the {MAX_SHOWN} most recently modified of {count} files.")
        if listing.stopped_early or listing.timed_out:
            notes.append(
                "The listing stopped early, so the order covers only the files found before that."
            )
        if notes:
            notes.append("Narrow it down with a more specific pattern or a subdirectory as path.")
            lines += ["", "[" + " ".join(notes) + "]"]
        return ToolResult(output="\n".join(lines))


def _no_files(pattern: str, where: str, timed_out: bool) -> str:
    place = "the workspace" if where == "." else where
    message = (
        f"No files match {pattern!r} in {place}. Files ignored by .gitignore and hidden files are "
        "skipped (a pattern or path naming a dot-directory includes them). A pattern without '/' "
        "matches file names at any depth ('*.py', 'conftest.py'); one with '/' matches paths "
        "relative to path ('src/**/*.ts')."
    )
    if timed_out:
        message += f" The listing was stopped after {ripgrep_runner.SEARCH_TIME_LIMIT:.0f} s."
    return message
