"""Syntax of changed files: Python by compiling it, every other language keel has a grammar for by tree-sitter
(an ERROR or MISSING node is a syntax error), JSON and TOML by their parsers."""

from __future__ import annotations

import warnings
from pathlib import Path

from keel.tools.linting.syntax_check import can_check, relative_path, syntax_problems

PYTHON_SUFFIXES = {".py", ".pyi"}


def python_syntax_error(path: Path, root: Path) -> str | None:
    """`path:line:col: SyntaxError: message` for a Python file that does not compile, else None."""
    try:
        source = path.read_bytes()
    except OSError:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like are not errors
            compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"{relative_path(path, root)}:{exc.lineno or 1}:{exc.offset or 1}"
        return f"{where}: {type(exc).__name__}: {exc.msg}"
    except ValueError as exc:  # null bytes
        return f"{relative_path(path, root)}:1:1: {exc}"
    return None


def syntax_errors(files: list[Path], root: Path) -> dict[Path, list[str]]:
    """The syntax errors of each file that can be checked ([] for a clean one); others are left out."""
    found: dict[Path, list[str]] = {}
    for path in files:
        if path.suffix.lower() in PYTHON_SUFFIXES:
            error = python_syntax_error(path, root)
            found[path] = [] if error is None else [error]
        elif can_check(path):
            found[path] = [str(d) for d in syntax_problems(path, root)]
    return found
