"""Whether the project's Python files still find what they import from the changed modules: a function renamed
in one file and still imported by its old name in another is a failure the model did not see (ruff checks one
file at a time). Static: nothing is imported or run."""

from __future__ import annotations

import ast
import os
from difflib import SequenceMatcher
from pathlib import Path

from keel.agent.core.verification.related_tests import SKIPPED_DIRS

MAX_FILES = 400  # project files read to find importers
NEAR_NAME = 0.6  # the likeness (shared words, or spelling) at which a defined name is suggested


def python_files(root: Path) -> list[str]:
    """The project's Python files, workspace-relative, leaving out hidden and dependency folders (at most
    MAX_FILES)."""
    found: list[str] = []
    for current, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        rel_dir = Path(current).relative_to(root)
        found.extend((rel_dir / name).as_posix() for name in sorted(names) if name.endswith(".py"))
        if len(found) >= MAX_FILES:
            break
    return found[:MAX_FILES]


def module_name(rel: str) -> str | None:
    """`pkg/mod.py` → `pkg.mod`, `pkg/__init__.py` → `pkg`; None for a file that is not Python."""
    if not rel.endswith(".py"):
        return None
    parts = rel[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or None


def top_level_names(source: str) -> set[str] | None:
    """What a module defines at top level (functions, classes, assignments, imports); None when it does not
    parse or takes names from elsewhere wholesale (`import *`, `__getattr__`)."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                return None
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return None if "__getattr__" in names else names


def missing_imports(root: Path, changed: list[str], files: list[str]) -> list[str]:
    """One line per name a project file imports from a changed module that the module no longer has."""
    provided: dict[str, set[str]] = {}
    for rel in changed:
        name = module_name(rel)
        path = root / rel
        if name is None or not path.is_file():
            continue
        names = top_level_names(path.read_text(encoding="utf-8", errors="replace"))
        if names is not None:
            provided[name] = names
    if not provided:
        return []
    problems: list[str] = []
    for rel in [f for f in files if f.endswith(".py")][:MAX_FILES]:
        try:
            tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level or node.module not in provided:
                continue
            for alias in node.names:
                if alias.name != "*" and alias.name not in provided[node.module]:
                    near = nearest_name(alias.name, provided[node.module])
                    problems.append(
                        f"{rel}:{node.lineno} imports {alias.name} from {node.module}, which does "
                        "not define it" + (f" (it defines {near})" if near else "")
                    )
    return problems


def nearest_name(missing: str, names: set[str]) -> str | None:
    """The name a module defines that the missing one most likely became: spelled alike (`slugfy`) or of the
    same words (`area_of_rect` renamed `rect_area`); None when none is close."""

    def likeness(name: str) -> float:
        words, others = set(missing.lower().split("_")), set(name.lower().split("_"))
        shared = len(words & others) / len(words | others)
        return max(shared, SequenceMatcher(None, missing, name).ratio())

    scored = sorted(((likeness(name), name) for name in names), reverse=True)
    if not scored or scored[0][0] < NEAR_NAME:
        return None
    return scored[0][1]
