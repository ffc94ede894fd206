"""In-process syntax checks: tree-sitter ERROR/MISSING nodes for every grammar; JSON and TOML."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from tree_sitter import Node

from keel.tools.codeintel.languages import language_for, parser_for

# One real mistake often leaves a trail of follow-on ERROR nodes; the first few are what matter.
MAX_ERRORS_PER_FILE = 5

DATA_FORMATS = {".json": "json", ".toml": "toml"}


class Diagnostic(BaseModel):
    """One problem in one file, shown as `path:line:col: [code ]message`."""

    model_config = ConfigDict(frozen=True)

    path: str  # workspace-relative, posix
    line: int  # 1-based
    col: int  # 1-based, in characters
    message: str
    code: str = ""
    source: str  # the tool that found it: ruff, tree-sitter, eslint, ...

    def __str__(self) -> str:
        text = f"{self.code} {self.message}" if self.code else self.message
        return f"{self.path}:{self.line}:{self.col}: {text}"

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.col, self.code, self.message)


@dataclass(frozen=True)
class SyntaxProblem:
    """A syntax error found in-process, before it is given a workspace-relative path."""

    line: int
    col: int
    message: str
    source: str


def relative_path(path: Path, root: Path) -> str:
    """How diagnostics name files: workspace-relative posix, absolute when outside the root."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def can_check(path: Path) -> bool:
    """Whether an in-process syntax check exists for this file."""
    return language_for(path) is not None or path.suffix.lower() in DATA_FORMATS


def _column(source: bytes, row: int, byte_col: int) -> int:
    """The 1-based character column of a tree-sitter (row, byte column) point."""
    lines = source.split(b"\n")
    if row >= len(lines):
        return byte_col + 1
    return len(lines[row][:byte_col].decode("utf-8", errors="replace")) + 1


def _snippet(node: Node) -> str:
    text = (node.text or b"").decode("utf-8", errors="replace").strip()
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= 30 else first[:27] + "..."


def _error_nodes(node: Node, found: list[Node]) -> None:
    """Collect ERROR and MISSING nodes in document order, not descending into an ERROR node."""
    if len(found) >= MAX_ERRORS_PER_FILE:
        return
    if node.is_error or node.is_missing:
        found.append(node)
        return
    for child in node.children:
        if child.has_error or child.is_missing:
            _error_nodes(child, found)


def tree_sitter_problems(path: Path, source: bytes) -> list[SyntaxProblem]:
    """Syntax errors tree-sitter sees in a file; [] without a grammar or when it parses cleanly."""
    language = language_for(path)
    if language is None:
        return []
    tree = parser_for(language).parse(source)
    if not tree.root_node.has_error:
        return []
    nodes: list[Node] = []
    _error_nodes(tree.root_node, nodes)
    problems = []
    for node in nodes:
        row, byte_col = node.start_point
        if node.is_missing:
            message = f"syntax error: missing {node.type!r}"
        elif snippet := _snippet(node):
            message = f"syntax error near {snippet!r}"
        else:
            message = "syntax error"
        column = _column(source, row, byte_col)
        problems.append(SyntaxProblem(row + 1, column, message, "tree-sitter"))
    return problems


def data_file_problems(path: Path, source: bytes) -> list[SyntaxProblem]:
    """Parse errors in JSON and TOML files, from the standard library parsers."""
    kind = DATA_FORMATS.get(path.suffix.lower())
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [SyntaxProblem(1, 1, f"not valid UTF-8: {exc.reason}", kind)] if kind else []
    if kind == "json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            return [SyntaxProblem(exc.lineno, exc.colno, f"invalid JSON: {exc.msg}", "json")]
    elif kind == "toml":
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            line, col = _toml_position(str(exc))
            reason = str(exc).rsplit(" (at line ", 1)[0]
            return [SyntaxProblem(line, col, f"invalid TOML: {reason}", "toml")]
    return []


def _toml_position(message: str) -> tuple[int, int]:
    """tomllib puts the position only in its message: '... (at line 3, column 5)'."""
    marker = "(at line "
    if marker not in message:
        return 1, 1
    rest = message.rsplit(marker, 1)[1].rstrip(")")
    line_part, _, col_part = rest.partition(", column ")
    try:
        return int(line_part), int(col_part or 1)
    except ValueError:
        return 1, 1


def syntax_problems(path: Path, root: Path, *, use_tree_sitter: bool = True) -> list[Diagnostic]:
    """All in-process syntax problems of one file; none when it cannot be read (it may be gone)."""
    try:
        source = path.read_bytes()
    except OSError:
        return []
    if path.suffix.lower() in DATA_FORMATS:
        problems = data_file_problems(path, source)
    else:
        problems = tree_sitter_problems(path, source) if use_tree_sitter else []
    return [
        Diagnostic(
            path=relative_path(path, root),
            line=p.line,
            col=p.col,
            message=p.message,
            source=p.source,
        )
        for p in problems
    ]
