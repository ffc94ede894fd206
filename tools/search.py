"""The `search` tool: ripgrep over the workspace, grouped by file, capped to spare the context."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from keel.prompts import plural
from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.searching import ripgrep_runner
from keel.tools.searching.path_glob import GlobError, compile_glob
from keel.tools.searching.ripgrep_runner import Engine, RipgrepError, SearchOutcome, SearchQuery

MAX_MATCHES = 200
MAX_OUTPUT_CHARS = 20_000
MAX_LINE_CHARS = 300
_REGEX_SPECIALS = set("\\.+*?()|[]{}^$")


class SearchArgs(ToolArgs):
    pattern: str = Field(
        min_length=1,
        description="Regular expression (Rust/ripgrep syntax: no look-around or backreferences) "
        "to look for in file contents, line by line. Set fixed_string to match it literally.",
    )
    path: str = Field(
        default=".", description="File or directory to search, relative to the workspace root."
    )
    glob: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. '*.py', '*.{ts,tsx}', "
        "'tests/**/test_*.py', or '!*.min.js' to exclude. Without '/' it matches file names "
        "at any depth; with '/' it is matched against paths relative to `path`.",
    )
    ignore_case: bool = Field(default=False, description="Match regardless of letter case.")
    context: int = Field(
        default=0, ge=0, le=20, description="Lines of context to show before and after each match."
    )
    fixed_string: bool = Field(
        default=False, description="Treat the pattern as literal text, not a regular expression."
    )


def _cut(text: str) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    return text[:MAX_LINE_CHARS] + " … [long line cut]"


def _format_hits(outcome: SearchOutcome, prefix: str, context: int) -> tuple[list[str], int, int]:
    """The output lines within the character budget, and how many matches and files they show.

    With context lines, a blank line sets each file apart.
    """
    out: list[str] = []
    used = shown_matches = shown_files = 0
    for hits in outcome.files:
        path = prefix + hits.path
        block: list[str] = [""] if out and context else []
        previous = None
        for line in hits.lines:
            if previous is not None and line.number > previous + 1:
                block.append("--")
            previous = line.number
            mark = ":" if line.is_match else "-"
            entry = f"{path}{mark}{line.number}{mark} {_cut(line.text)}"
            if used + len(entry) + 1 > MAX_OUTPUT_CHARS:
                break
            block.append(entry)
            used += len(entry) + 1
            shown_matches += line.is_match
        while block and block[-1] == "--":
            block.pop()
        if any(entry and entry != "--" for entry in block):
            out.extend(block)
            shown_files += 1
        if used >= MAX_OUTPUT_CHARS - MAX_LINE_CHARS:
            break
    return out, shown_matches, shown_files


def format_outcome(outcome: SearchOutcome, args: SearchArgs, prefix: str) -> str:
    """`path:line: text` for matches, `path-line- text` for context, and a note when cut."""
    lines, shown, shown_files = _format_hits(outcome, prefix, args.context)
    total_files = len(outcome.files)
    if outcome.stopped_early:
        header = f"{shown} matches shown in {plural(shown_files, 'file')} (more exist)"
    elif shown < outcome.match_count:
        header = (
            f"{outcome.match_count} matches in {plural(total_files, 'file')}; "
            f"{shown} shown from {plural(shown_files, 'file')}"
        )
    else:
        header = f"{plural(outcome.match_count, 'match')} in {plural(total_files, 'file')}"
    notes = []
    if outcome.stopped_early:
        notes.append(f"The search stopped after {MAX_MATCHES} matches, so there are more.")
    if shown < outcome.match_count:
        notes.append(f"The output is capped at about {MAX_OUTPUT_CHARS // 1000} KB.")
    if outcome.cut_short:
        notes.append(f"Matches may be missing: {outcome.cut_short}.")
    if notes:
        advice = (
            "Narrow it down: a more specific pattern, a subdirectory as path, "
            "or a glob such as '*.py'"
        )
        notes.append(advice + (", or less context." if args.context else "."))
        lines += ["", "[" + " ".join(notes) + "]"]
    return "\n".join([header + ":", *lines])


def _no_matches(args: SearchArgs, where: str, cut_short: str | None) -> str:
    filters = [f"glob {args.glob!r}"] if args.glob else []
    if args.ignore_case:
        filters.append("ignoring case")
    if args.fixed_string:
        filters.append("as a fixed string")
    place = "the workspace" if where == "." else where
    message = f"No matches for {args.pattern!r} in {place}" + (
        f" ({', '.join(filters)})" if filters else ""
    )
    message += ". Files ignored by .gitignore and hidden files are not searched"
    message += " (name a hidden directory in path to search it)."
    if not args.fixed_string and _REGEX_SPECIALS.intersection(args.pattern):
        message += (
            " The pattern is a regular expression; set fixed_string=true to match it literally."
        )
    if cut_short:
        message += f" Matches may be missing: {cut_short}; narrow the search down."
    return message


def _explain(error: RipgrepError, args: SearchArgs) -> str:
    detail = "\n".join(line.removeprefix("rg: ") for line in str(error).splitlines())
    if "regex" in detail:
        return (
            f"invalid regex {args.pattern!r}:\n{detail}\n"
            "The pattern is a Rust regular expression (look-around and backreferences are not "
            "supported). To search for the text literally, pass fixed_string=true, or escape the "
            "special characters with a backslash (for example \\( \\[ \\. \\* \\?)."
        )
    return f"ripgrep failed: {detail}"


class SearchTool(Tool[SearchArgs]):
    name = "search"
    kind = ToolKind.READ
    description = (
        "Search file contents with a regular expression (ripgrep). Results are grouped by file as "
        "`path:line: text` (context lines as `path-line- text`), paths relative to the workspace "
        "root. Respects .gitignore; skips hidden files unless path or glob names them; at most "
        f"{MAX_MATCHES} matches are shown. Use glob and path to narrow the search."
    )
    Args = SearchArgs

    def __init__(self, engine: Engine = "auto") -> None:
        self.engine: Engine = engine

    async def run(self, args: SearchArgs, ctx: ToolContext) -> ToolResult:
        target = ctx.resolve(args.path)
        if not target.exists():
            raise ToolError(
                f"{args.path!r} does not exist in the workspace; pass an existing file or "
                "directory (relative to the workspace root), or use find_files to locate it"
            )
        cwd, name = (target, ".") if target.is_dir() else (target.parent, target.name)
        try:  # a glob has nothing to choose from when path is a single file
            glob = compile_glob(args.glob) if args.glob and target.is_dir() else None
        except GlobError as exc:
            raise ToolError(
                f"{exc}. Use a glob like '*.py', 'src/**/*.ts' or '*.{{js,jsx}}'."
            ) from None
        query = SearchQuery(
            pattern=args.pattern,
            cwd=cwd,
            target=name,
            glob=glob,
            ignore_case=args.ignore_case,
            fixed_string=args.fixed_string,
            context=args.context,
            max_matches=MAX_MATCHES,
        )
        try:
            outcome = await ripgrep_runner.search(query, self.engine)
        except RipgrepError as exc:
            raise ToolError(_explain(exc, args)) from None
        if not outcome.files:
            return ToolResult(output=_no_matches(args, ctx.relative(target), outcome.cut_short))
        return ToolResult(output=format_outcome(outcome, args, _display_prefix(ctx, cwd)))


def _display_prefix(ctx: ToolContext, directory: Path) -> str:
    relative = ctx.relative(directory)
    return "" if relative == "." else relative + "/"
