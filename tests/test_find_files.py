"""The find_files tool on real temp git repos, with both engines (rg and python-ripgrep)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from keel.tools.base import ToolContext, ToolResult
from keel.tools.find_files import MAX_SHOWN, FindFilesTool
from keel.tools.registry import ToolRegistry

ENGINES = ["cli", "inprocess"]


def make_repo(root: Path, names: list[str]) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}\n")
    return root


async def find(root: Path, engine: str = "cli", **arguments: object) -> ToolResult:
    registry = ToolRegistry([FindFilesTool(engine)])  # type: ignore[arg-type]
    tool, args = registry.validate("find_files", arguments)
    return await registry.run(tool, args, ToolContext(root=root, scratch=root))


def listed(result: ToolResult) -> list[str]:
    assert result.ok, result.output
    lines = result.output.splitlines()[1:]
    return lines[: lines.index("")] if "" in lines else lines


@pytest.mark.parametrize("engine", ENGINES)
async def test_most_recently_modified_first(tmp_path: Path, engine: str) -> None:
    names = ["old.py", "pkg/newest.py", "pkg/deep/middle.py", "notes.md"]
    make_repo(tmp_path, names)
    base = 1_700_000_000
    for offset, name in [
        (0, "old.py"),
        (300, "pkg/newest.py"),
        (200, "pkg/deep/middle.py"),
        (100, "notes.md"),
    ]:
        os.utime(tmp_path / name, (base + offset, base + offset))
    result = await find(tmp_path, engine, pattern="**/*.py")
    assert result.output.splitlines()[0] == (
        "3 files matching '**/*.py' in the workspace (most recently modified first):"
    )
    assert listed(result) == ["pkg/newest.py", "pkg/deep/middle.py", "old.py"]
    os.utime(tmp_path / "old.py", (base + 900, base + 900))
    assert listed(await find(tmp_path, engine, pattern="*.py"))[0] == "old.py"


@pytest.mark.parametrize("engine", ENGINES)
async def test_gitignored_files_are_excluded(tmp_path: Path, engine: str) -> None:
    make_repo(
        tmp_path, ["src/a.py", "build/gen.py", "src/trace.log", "node_modules/x/index.js", ".env"]
    )
    (tmp_path / ".gitignore").write_text("build/\n*.log\nnode_modules/\n")
    assert listed(await find(tmp_path, engine, pattern="*.py")) == ["src/a.py"]
    assert (await find(tmp_path, engine, pattern="*.log")).output.startswith(
        "No files match '*.log'"
    )
    assert sorted(listed(await find(tmp_path, engine, pattern="**/*"))) == ["src/a.py"]
    assert (await find(tmp_path, engine, pattern="node_modules/**")).output.startswith(
        "No files match"
    )


async def test_patterns_naming_hidden_directories_include_them_but_never_git(
    tmp_path: Path,
) -> None:
    make_repo(tmp_path, [".github/workflows/ci.yml", "src/a.yml"])
    assert listed(await find(tmp_path, pattern="*.yml")) == ["src/a.yml"]
    assert listed(await find(tmp_path, pattern=".github/**")) == [".github/workflows/ci.yml"]
    assert listed(await find(tmp_path, pattern="*.yml", path=".github")) == [
        ".github/workflows/ci.yml"
    ]
    assert (await find(tmp_path, pattern=".git/**")).output.startswith("No files match")


@pytest.mark.parametrize("engine", ENGINES)
async def test_glob_forms(tmp_path: Path, engine: str) -> None:
    make_repo(
        tmp_path,
        [
            "conftest.py",
            "tests/conftest.py",
            "tests/unit/conftest.py",
            "README.md",
            "docs/guide.md",
            "src/app/test_one.ts",
            "src/app/deep/test_two.ts",
            "src/app/other.ts",
            "lib/test_three.ts",
        ],
    )

    async def names(pattern: str, path: str = ".") -> list[str]:
        return sorted(listed(await find(tmp_path, engine, pattern=pattern, path=path)))

    assert await names("conftest.py") == [
        "conftest.py",
        "tests/conftest.py",
        "tests/unit/conftest.py",
    ]
    assert await names("*.md") == ["README.md", "docs/guide.md"]
    assert await names("src/**/test_*.ts") == ["src/app/deep/test_two.ts", "src/app/test_one.ts"]
    assert await names("./src/app/*.ts") == ["src/app/other.ts", "src/app/test_one.ts"]
    assert await names("deep/*.ts", path="src/app") == ["src/app/deep/test_two.ts"]
    assert await names("conftest.py", path="tests") == [
        "tests/conftest.py",
        "tests/unit/conftest.py",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_cap_keeps_the_newest_and_says_so(tmp_path: Path, engine: str) -> None:
    count = MAX_SHOWN + 30
    make_repo(tmp_path, [f"f{n:03}.txt" for n in range(count)])
    for n in range(count):
        os.utime(tmp_path / f"f{n:03}.txt", (1_700_000_000 + n, 1_700_000_000 + n))
    result = await find(tmp_path, engine, pattern="*.txt")
    shown = listed(result)
    assert len(shown) == MAX_SHOWN
    assert shown[0] == f"f{count - 1:03}.txt" and shown[-1] == f"f{count - MAX_SHOWN:03}.txt"
    assert result.output.splitlines()[-1] == (
        f"[Showing the {MAX_SHOWN} most recently modified of {count} files. "
        "Narrow it down with a more specific pattern or a subdirectory as path.]"
    )


async def test_no_match_explains_the_glob_rules(tmp_path: Path) -> None:
    make_repo(tmp_path, ["a.py"])
    result = await find(tmp_path, pattern="*.rs")
    assert result.ok
    assert result.output.startswith("No files match '*.rs' in the workspace.")
    assert "any depth" in result.output and ".gitignore" in result.output


async def test_bad_paths_and_globs_are_refused(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", ["a.py"])
    (tmp_path / "outside").mkdir()
    for path in ("..", "../outside", str(tmp_path / "outside")):
        result = await find(root, pattern="*", path=path)
        assert not result.ok and "outside the workspace" in result.output, path
    as_file = await find(root, pattern="*", path="a.py")
    assert not as_file.ok and "is a file" in as_file.output
    missing = await find(root, pattern="*", path="nope")
    assert not missing.ok and "does not exist" in missing.output
    bad_glob = await find(root, pattern="src/[ab")
    assert not bad_glob.ok and "unclosed character class" in bad_glob.output
