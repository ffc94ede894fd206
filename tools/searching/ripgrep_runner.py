"""ripgrep for search and find_files: `rg` streamed and stoppable; python-ripgrep as fallback.

Engine choice (measured by bench/search.py): spawning `rg` costs a few ms more than the in-process
binding on a small tree, but only `rg` can be stopped once enough matches are in (tens of times
faster on a common pattern in a large tree) and killed on timeout or cancellation; python-ripgrep
0.0.9 also silently drops match lines that are not valid UTF-8 and cannot include hidden files. So
"auto" uses `rg`, and the binding only when no `rg` binary is found or it fails to start.

Semantics: .gitignore / .ignore / .rgignore rules apply (.gitignore only inside a git repository,
ripgrep's default); hidden files and directories are skipped unless the path or glob names one; .git
is never searched. Globs are PathGlobs, never rg's `--glob` (which overrides ignore rules): the file
name part becomes an rg file type, which does not, and the whole glob is checked on each path here.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from keel.tools.searching.path_glob import PathGlob, names_hidden

Engine = Literal["auto", "cli", "inprocess"]

SEARCH_TIME_LIMIT = 30.0
MAX_RG_COLUMNS = 2000  # rg cuts longer lines to a preview, so one minified file cannot flood memory
MAX_LISTED = 50_000
_READ_CHUNK = 1 << 16
# NUL separates the fields of a match line, SOH those of a context line
_FIELD_SEPARATORS = "\x00\x01"
_GLOB_TYPE = "keelglob"


class RipgrepError(Exception):
    """ripgrep refused the request (an invalid regex, a bad glob); the message is ripgrep's own."""


@dataclass
class SearchQuery:
    """One search: rg walks `target` (a file or directory under `cwd`); globs match from `cwd`."""

    pattern: str
    cwd: Path
    target: str = "."
    glob: PathGlob | None = None
    ignore_case: bool = False
    fixed_string: bool = False
    context: int = 0
    max_matches: int = 200
    time_limit: float = SEARCH_TIME_LIMIT


@dataclass
class Line:
    number: int
    text: str
    is_match: bool


@dataclass
class FileHits:
    """Matching lines (and context lines) of one file; `path` is relative to the query's cwd."""

    path: str
    lines: list[Line] = field(default_factory=list)

    @property
    def match_count(self) -> int:
        return sum(line.is_match for line in self.lines)


@dataclass
class SearchOutcome:
    files: list[FileHits]
    match_count: int
    stopped_early: bool = False  # more matches exist than were collected
    cut_short: str | None = None  # why some files may not have been searched at all


@dataclass
class FileListing:
    paths: list[str]  # relative to the cwd, in ripgrep's walk order
    stopped_early: bool = False  # more than `limit` files matched
    timed_out: bool = False


@cache
def rg_binary() -> str | None:
    """The `rg` of the ripgrep wheel beside this interpreter (venv bin), else the one on PATH."""
    for directory in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = directory / "rg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


def _choose(engine: Engine) -> Literal["cli", "inprocess"]:
    if engine == "auto":
        return "cli" if rg_binary() else "inprocess"
    return engine


# ---------------------------------------------------------- output parsing (shared by both engines)


def parse_line(raw: str) -> tuple[str, Line] | None:
    """One ripgrep output line, `path SEP number SEP text` with SEP NUL (match) or SOH (context).

    Returns None for anything else, such as the `--` lines between context groups.
    """
    path_end = next((i for i, ch in enumerate(raw) if ch in _FIELD_SEPARATORS), -1)
    if path_end < 0:
        return None
    digits_end = path_end + 1
    while digits_end < len(raw) and raw[digits_end].isdigit():
        digits_end += 1
    if (
        digits_end == path_end + 1
        or digits_end >= len(raw)
        or raw[digits_end] not in _FIELD_SEPARATORS
    ):
        return None
    text = raw[digits_end + 1 :].rstrip("\r")
    line = Line(int(raw[path_end + 1 : digits_end]), text, raw[digits_end] == "\x00")
    return raw[:path_end].removeprefix("./"), line


class _Collector:
    """Gathers parsed lines by file, stopping once one match more than wanted has been seen."""

    def __init__(self, max_matches: int) -> None:
        self.max_matches = max_matches
        self.files: dict[str, FileHits] = {}
        self.match_count = 0
        self.full = False

    def add(self, path: str, line: Line) -> None:
        if self.full:
            return
        if line.is_match:
            if self.match_count == self.max_matches:
                self.full = True
                return
            self.match_count += 1
        self.files.setdefault(path, FileHits(path)).lines.append(line)

    def outcome(self, cut_short: str | None = None) -> SearchOutcome:
        files = sorted((f for f in self.files.values() if f.match_count), key=lambda f: f.path)
        return SearchOutcome(files, self.match_count, self.full, cut_short)


# ---------------------------------------------------------- the rg process


async def _stream_rg(
    args: list[str], cwd: Path, time_limit: float, consume: Callable[[str], bool]
) -> tuple[bool, int | None, str]:
    """Run rg, feeding each output line to `consume` until it returns True (enough) or time is up.

    Returns (timed out, exit code or None when stopped, stderr). The process is killed on every
    early way out, cancellation included.
    """
    proc = await asyncio.create_subprocess_exec(
        rg_binary() or "rg",
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.ensure_future(proc.stderr.read())
    timed_out = stopped = read_all = False
    try:
        async with asyncio.timeout(time_limit):
            pending = b""
            while chunk := await proc.stdout.read(_READ_CHUNK):
                *lines, pending = (pending + chunk).split(b"\n")
                if any(consume(line.decode("utf-8", errors="replace")) for line in lines):
                    stopped = True
                    break
            else:
                read_all = True
                if pending:
                    consume(pending.decode("utf-8", errors="replace"))
    except TimeoutError:
        timed_out = True
    finally:
        if not read_all and proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
        await proc.wait()
        stderr = (await stderr_task).decode("utf-8", errors="replace")
    return timed_out, None if (stopped or timed_out) else proc.returncode, stderr


def _raise_for_error(code: int | None, stderr: str, found_anything: bool) -> None:
    # rg exits 2 for any error, unreadable files it skipped included; only a fruitless run fails
    if code == 2 and not found_anything and stderr.strip():
        raise RipgrepError(stderr.strip())


@dataclass
class _Walk:
    """How rg walks for a glob: flags (hidden files, a name prefilter) and the check on each path.

    The walk always starts at the target: starting lower (at `src` for `src/**`) would make rg
    search that directory even when .gitignore excludes it.
    """

    args: list[str]
    keep: Callable[[str], bool]


def _plan_walk(target: str, glob: PathGlob | None) -> _Walk:
    args = ["--no-config", "--no-messages", "--color=never"]
    hidden = (glob is not None and glob.names_hidden and not glob.negated) or names_hidden(target)
    if hidden:
        args += ["--hidden", "--glob", "!.git"]
    if glob is not None and glob.on_name and glob.negated:
        args += ["--type-add", f"{_GLOB_TYPE}:{glob.body}", "--type-not", _GLOB_TYPE]
    elif glob is not None and glob.name_part:
        args += ["--type-add", f"{_GLOB_TYPE}:{glob.name_part}", "--type", _GLOB_TYPE]
    path_glob = glob if glob is not None and not glob.on_name else None

    def keep(path: str) -> bool:
        # rg's file types also let dotfiles through ('*'), so hidden paths are checked here too
        if not hidden and names_hidden(path):
            return False
        return path_glob is None or path_glob.matches(path)

    return _Walk(args, keep)


async def _files_cli(
    cwd: Path, target: str, glob: PathGlob | None, limit: int, time_limit: float
) -> FileListing:
    walk = _plan_walk(target, glob)
    paths: list[str] = []

    def consume(raw: str) -> bool:
        path = raw.removeprefix("./")
        if path and walk.keep(path):
            paths.append(path)
        return len(paths) > limit

    args = [*walk.args, "--files", "--", target]
    timed_out, code, stderr = await _stream_rg(args, cwd, time_limit, consume)
    _raise_for_error(code, stderr, bool(paths))
    return FileListing(paths[:limit], stopped_early=len(paths) > limit, timed_out=timed_out)


async def _search_cli(query: SearchQuery) -> SearchOutcome:
    collector = _Collector(query.max_matches)
    walk = _plan_walk(query.target, query.glob)
    args = [
        *walk.args,
        "--line-number",
        "--with-filename",
        "--no-heading",
        "--null",
        "--field-match-separator",
        r"\x00",
        "--field-context-separator",
        r"\x01",
        "--max-columns",
        str(MAX_RG_COLUMNS),
        "--max-columns-preview",
        "--max-count",
        str(query.max_matches + 1),
    ]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.fixed_string:
        args.append("--fixed-strings")
    if query.context:
        args += ["--context", str(query.context)]
    args += ["--regexp", query.pattern, "--", query.target]

    def consume(raw: str) -> bool:
        parsed = parse_line(raw)
        if parsed is not None and walk.keep(parsed[0]):
            collector.add(*parsed)
        return collector.full

    timed_out, code, stderr = await _stream_rg(args, query.cwd, query.time_limit, consume)
    _raise_for_error(code, stderr, bool(collector.files))
    return collector.outcome(
        f"the search took over {query.time_limit:g} s and was stopped" if timed_out else None
    )


# ---------------------------------------------------------- python-ripgrep in-process (fallback)


def _rust_regex_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "\\.+*?()|[]{}^$#&-~" else ch for ch in text)


def _relative(cwd: Path, reported: str) -> str:
    try:
        return Path(reported).relative_to(cwd).as_posix()
    except ValueError:
        return reported


def _files_inprocess(cwd: Path, target: str, glob: PathGlob | None, limit: int) -> FileListing:
    import python_ripgrep

    found = (_relative(cwd, path) for path in python_ripgrep.files([], paths=[str(cwd / target)]))
    paths = [path for path in found if glob is None or glob.matches(path)]
    return FileListing(paths[:limit], stopped_early=len(paths) > limit)


def _search_inprocess(query: SearchQuery) -> SearchOutcome:
    import python_ripgrep

    cut_short = None
    targets = [str(query.cwd / query.target)]
    if query.glob is not None:
        listing = _files_inprocess(query.cwd, query.target, query.glob, MAX_LISTED)
        if listing.stopped_early:
            cut_short = f"only the first {MAX_LISTED:,} files matching the glob were searched"
        targets = [str(query.cwd / path) for path in listing.paths]
    collector = _Collector(query.max_matches)
    if not targets:
        return collector.outcome(cut_short)
    pattern = _rust_regex_escape(query.pattern) if query.fixed_string else query.pattern
    try:
        chunks = python_ripgrep.search(
            [("(?i)" if query.ignore_case else "") + pattern],
            paths=targets,
            heading=False,
            line_number=True,
            max_count=query.max_matches + 1,
            after_context=query.context or None,
            before_context=query.context or None,
            separator_field_match="\x00",
            separator_field_context="\x01",
        )
    except ValueError as exc:
        raise RipgrepError(str(exc)) from None
    lone_file = targets[0] if len(targets) == 1 and Path(targets[0]).is_file() else None
    for chunk in chunks:
        for raw in chunk.split("\n"):
            if lone_file and raw:  # rg names no file when it searches just one
                raw = lone_file + "\x00" + raw
            parsed = parse_line(raw)
            if parsed is not None:
                path, line = parsed
                collector.add(_relative(query.cwd, path), line)
    return collector.outcome(cut_short)


# ---------------------------------------------------------- the entry points


async def search(query: SearchQuery, engine: Engine = "auto") -> SearchOutcome:
    """Matches for a query, grouped by file, sorted by path; RipgrepError for a bad pattern."""
    if _choose(engine) == "cli":
        try:
            return await _search_cli(query)
        except OSError:  # rg would not start; "auto" goes on in-process
            if engine != "auto":
                raise
    return await asyncio.to_thread(_search_inprocess, query)


async def list_files(
    cwd: Path,
    target: str = ".",
    glob: PathGlob | None = None,
    *,
    limit: int = MAX_LISTED,
    time_limit: float = SEARCH_TIME_LIMIT,
    engine: Engine = "auto",
) -> FileListing:
    """The files rg would search under `target` (relative to `cwd`) that `glob` selects."""
    if _choose(engine) == "cli":
        try:
            return await _files_cli(cwd, target, glob, limit, time_limit)
        except OSError:  # rg would not start; "auto" goes on in-process
            if engine != "auto":
                raise
    return await asyncio.to_thread(_files_inprocess, cwd, target, glob, limit)
