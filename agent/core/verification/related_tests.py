"""Which test files exercise a changed Python module: those that import it (or are the change themselves), for
running the tests that matter when the project has no known test command."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

SKIPPED_DIRS = {"node_modules", "venv", "__pycache__", "target", "dist", "build", "site-packages"}
# test files read at most, and files looked at to find them: a huge repository's tests are for its test command
MAX_SCANNED = 2000
MAX_WALKED = 20_000


def is_test_file(rel: str) -> bool:
    """pytest's default names: test_*.py and *_test.py."""
    name = PurePosixPath(rel).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def module_names(rel: str) -> set[str]:
    """The dotted names a file may be imported by: from the root, and from each enclosing folder (a src/ layout,
    a tests folder on sys.path) down to its bare module name; a package's __init__.py is its folder."""
    parts = list(PurePosixPath(rel).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[start:]) for start in range(len(parts))}


def imports_any(source: str, names: set[str]) -> bool:
    """Whether Python source imports one of these modules (`import a.b`, `from a.b import c`, `from a import b`)."""
    for name in names:
        head, _, last = name.rpartition(".")
        patterns = [
            rf"^\s*import\s+[^#\n]*\b{re.escape(name)}\b",
            rf"^\s*from\s+{re.escape(name)}\s+import\b",
        ]
        if head:
            patterns.append(
                rf"^\s*from\s+{re.escape(head)}\s+import\s+[^#\n]*\b{re.escape(last)}\b"
            )
        if any(re.search(pattern, source, re.MULTILINE) for pattern in patterns):
            return True
    return False


def candidate_tests(root: Path) -> list[str]:
    """The repository's Python test files, workspace-relative, leaving out hidden and dependency folders."""
    found: list[str] = []
    walked = 0
    for current, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        rel_dir = Path(current).relative_to(root)
        found.extend((rel_dir / name).as_posix() for name in sorted(names) if is_test_file(name))
        walked += len(names)
        if len(found) >= MAX_SCANNED or walked >= MAX_WALKED:
            break
    return found[:MAX_SCANNED]


def importing_tests(root: Path, changed: list[str], candidates: list[str]) -> list[str]:
    """The candidate test files that import a changed Python module, and changed test files themselves."""
    python = [rel for rel in changed if rel.endswith(".py")]
    chosen = [rel for rel in python if is_test_file(rel) and rel in candidates]
    names = set().union(*(module_names(rel) for rel in python if not is_test_file(rel)))
    if names:
        for rel in candidates:
            if rel in chosen:
                continue
            try:
                source = (root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if imports_any(source, names):
                chosen.append(rel)
    return sorted(chosen)
