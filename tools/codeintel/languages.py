"""Which tree-sitter grammar reads which file: per-language grammar wheels, loaded once on first use."""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

from tree_sitter import Language, Parser

# language name -> (grammar module, function returning the language capsule)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "bash": ("tree_sitter_bash", "language"),
}

_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".rb": "ruby",
    ".sh": "bash",
    ".bash": "bash",
}


def language_for(path: Path | str) -> str | None:
    """The language name for a file, by its extension; None when no grammar reads it."""
    return _EXTENSIONS.get(Path(path).suffix.lower())


@cache
def grammar(name: str) -> Language:
    module_name, attr = _GRAMMARS[name]
    module = importlib.import_module(module_name)
    return Language(getattr(module, attr)())


def parser_for(name: str) -> Parser:
    """A fresh parser for a language (parsers are cheap; grammars are cached)."""
    return Parser(grammar(name))


def supported_languages() -> list[str]:
    return list(_GRAMMARS)
