"""The layering DESIGN.md fixes: the core (agent/) and the tools never import the terminal UI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("package", ["agent", "tools", "prompts"])
def test_the_core_never_imports_the_tui(package):
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            name for name in imported_modules(path) if name == "tui" or name.startswith("tui.")
        )
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    assert {file: names for file, names in offenders.items() if names} == {}


def test_the_check_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "lazy.py"
    module.write_text("def later():\n    from tui.app import KeelApp\n    import tui\n")
    assert imported_modules(module) == {"tui.app", "tui"}
