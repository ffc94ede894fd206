"""The search tool on real temp git repos, with both engines (rg and python-ripgrep)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from keel.tools.base import ToolContext, ToolResult
from keel.tools.registry import ToolRegistry
from keel.tools.search import MAX_MATCHES, MAX_OUTPUT_CHARS, SearchTool
from keel.tools.searching.path_glob import GlobError, compile_glob
from keel.tools.searching.ripgrep_runner import parse_line, rg_binary

ENGINES = ["cli", "inprocess"]


def make_repo(root: Path, files: dict[str, str | bytes]) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


async def search(root: Path, engine: str = "cli", **arguments: object) -> ToolResult:
    registry = ToolRegistry([SearchTool(engine)])  # type: ignore[arg-type]
    tool, args = registry.validate("search", arguments)
    return await registry.run(tool, args, ToolContext(root=root, scratch=root))


def test_rg_binary_is_found() -> None:
    assert rg_binary() is not None


@pytest.mark.parametrize("engine", ENGINES)
async def test_matches_with_context_grouped_by_file(tmp_path: Path, engine: str) -> None:
    body = "".join(f"line {n}\n" for n in range(1, 11)).replace("line 2\n", "target 2\n")
    body = body.replace("line 8\n", "target 8\n")
    make_repo(tmp_path, {"src/a.py": body, "src/b.py": "x\ntarget here\n", "src/c.py": "nothing\n"})
    result = await search(tmp_path, engine, pattern="target", context=1)
    assert result.ok
    assert result.output.splitlines() == [
        "3 matches in 2 files:",
        "src/a.py-1- line 1",
        "src/a.py:2: target 2",
        "src/a.py-3- line 3",
        "--",
        "src/a.py-7- line 7",
        "src/a.py:8: target 8",
        "src/a.py-9- line 9",
        "",
        "src/b.py-1- x",
        "src/b.py:2: target here",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_paths_are_relative_to_the_workspace_root(tmp_path: Path, engine: str) -> None:
    make_repo(tmp_path, {"pkg/sub/mod.py": "needle = 1\n", "other.py": "needle = 2\n"})
    result = await search(tmp_path, engine, pattern="needle", path="pkg/sub")
    assert result.output.splitlines()[1:] == ["pkg/sub/mod.py:1: needle = 1"]
    result = await search(tmp_path, engine, pattern="needle", path="pkg/sub/mod.py")
    assert result.output.splitlines()[1:] == ["pkg/sub/mod.py:1: needle = 1"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_glob_filters_files(tmp_path: Path, engine: str) -> None:
    make_repo(
        tmp_path,
        {
            "src/app/main.py": "hit\n",
            "src/app/main.ts": "hit\n",
            "tests/test_x.py": "hit\n",
            "README.md": "hit\n",
            "src/app/view.tsx": "hit\n",
        },
    )

    async def files_for(glob: str) -> set[str]:
        result = await search(tmp_path, engine, pattern="hit", glob=glob)
        return {line.split(":")[0] for line in result.output.splitlines()[1:] if line}

    assert await files_for("*.py") == {"src/app/main.py", "tests/test_x.py"}
    assert await files_for("src/**/*.py") == {"src/app/main.py"}
    assert await files_for("*.{ts,tsx}") == {"src/app/main.ts", "src/app/view.tsx"}
    assert await files_for("!*.py") == {"src/app/main.ts", "src/app/view.tsx", "README.md"}
    assert await files_for("src/app/*") == {
        "src/app/main.py",
        "src/app/main.ts",
        "src/app/view.tsx",
    }
    result = await search(tmp_path, engine, pattern="hit", glob="nowhere/*.py")
    assert result.ok and result.output.startswith(
        "No matches for 'hit' in the workspace (glob 'nowhere/*.py')"
    )


@pytest.mark.parametrize("engine", ENGINES)
async def test_ignore_case(tmp_path: Path, engine: str) -> None:
    make_repo(tmp_path, {"a.txt": "Hello\nHELLO\nhello\nhelo\n"})
    sensitive = await search(tmp_path, engine, pattern="hello")
    assert sensitive.output.splitlines() == ["1 match in 1 file:", "a.txt:3: hello"]
    insensitive = await search(tmp_path, engine, pattern="hello", ignore_case=True)
    assert insensitive.output.splitlines()[1:] == [
        "a.txt:1: Hello",
        "a.txt:2: HELLO",
        "a.txt:3: hello",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_gitignored_and_hidden_files_are_skipped(tmp_path: Path, engine: str) -> None:
    make_repo(
        tmp_path,
        {
            ".gitignore": "build/\n*.log\n",
            "src/keep.py": "secret\n",
            "build/out.py": "secret\n",
            "src/debug.log": "secret\n",
            ".github/ci.yml": "secret\n",
            ".git/info/secret.txt": "secret\n",
        },
    )
    for glob in (None, "*.log", "**/*", "build/*"):
        result = await search(tmp_path, engine, pattern="secret", glob=glob)
        lines = [line for line in result.output.splitlines()[1:] if line]
        assert lines == (["src/keep.py:1: secret"] if glob in (None, "**/*") else []), glob
    named = await search(tmp_path, engine, pattern="secret", path=".github")
    assert named.output.splitlines()[1:] == [".github/ci.yml:1: secret"]


async def test_a_glob_naming_a_hidden_directory_includes_it(tmp_path: Path) -> None:
    make_repo(tmp_path, {".github/workflows/ci.yml": "run: x\n", "src/a.yml": "run: y\n"})
    result = await search(tmp_path, pattern="run:", glob=".github/**")
    assert result.output.splitlines()[1:] == [".github/workflows/ci.yml:1: run: x"]


async def test_gitignore_outside_a_git_repository_is_not_applied(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("ignored.txt\n")
    (tmp_path / "ignored.txt").write_text("word\n")
    result = await search(tmp_path, pattern="word")
    assert result.output.splitlines()[1:] == ["ignored.txt:1: word"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_invalid_regex_says_what_is_wrong_and_what_works(tmp_path: Path, engine: str) -> None:
    make_repo(tmp_path, {"a.py": "call(x)\n"})
    result = await search(tmp_path, engine, pattern="call(")
    assert not result.ok
    assert "invalid regex 'call('" in result.output
    assert "unclosed group" in result.output
    assert "fixed_string=true" in result.output and "backslash" in result.output
    literal = await search(tmp_path, engine, pattern="call(", fixed_string=True)
    assert literal.output.splitlines()[1:] == ["a.py:1: call(x)"]
    escaped = await search(tmp_path, engine, pattern=r"call\(x\)")
    assert escaped.output.splitlines()[1:] == ["a.py:1: call(x)"]


async def test_lookaround_is_refused_with_the_reason(tmp_path: Path) -> None:
    make_repo(tmp_path, {"a.py": "ab\n"})
    result = await search(tmp_path, pattern="a(?=b)")
    assert not result.ok and "look-around" in result.output


async def test_invalid_glob_is_explained(tmp_path: Path) -> None:
    make_repo(tmp_path, {"a.py": "x\n"})
    result = await search(tmp_path, pattern="x", glob="*.{py")
    assert not result.ok and "unclosed alternation" in result.output and "'*.py'" in result.output


@pytest.mark.parametrize("engine", ENGINES)
async def test_no_matches_says_so(tmp_path: Path, engine: str) -> None:
    make_repo(tmp_path, {"a.py": "x = [1]\n"})
    result = await search(tmp_path, engine, pattern="x[1]", ignore_case=True)
    assert result.ok
    assert result.output.startswith("No matches for 'x[1]' in the workspace (ignoring case).")
    assert ".gitignore" in result.output and "fixed_string=true" in result.output


@pytest.mark.parametrize("engine", ENGINES)
async def test_match_cap_stops_and_says_how_to_narrow(tmp_path: Path, engine: str) -> None:
    files = {f"f{n}.txt": "".join(f"match {i}\n" for i in range(100)) for n in range(5)}
    make_repo(tmp_path, files)
    result = await search(tmp_path, engine, pattern="match")
    lines = result.output.splitlines()
    assert lines[0].startswith(f"{MAX_MATCHES} matches shown in ")
    assert sum(":" in line and line.startswith("f") for line in lines) == MAX_MATCHES
    assert f"stopped after {MAX_MATCHES} matches" in lines[-1]
    assert "glob" in lines[-1] and "path" in lines[-1]


async def test_long_lines_are_cut_and_output_stays_within_budget(tmp_path: Path) -> None:
    make_repo(tmp_path, {f"m{n}.js": ("needle" + "x" * 5000 + "\n") * 3 for n in range(40)})
    result = await search(tmp_path, pattern="needle")
    assert "… [long line cut]" in result.output
    assert len(result.output) < MAX_OUTPUT_CHARS + 1000
    assert "matches in 40 files;" in result.output.splitlines()[0]
    assert "capped at about 20 KB" in result.output


async def test_lines_that_are_not_utf8_still_match(tmp_path: Path) -> None:
    make_repo(tmp_path, {"latin1.txt": "caf\xe9 = 1\n".encode("latin-1")})
    result = await search(tmp_path, pattern="caf")
    assert result.output.splitlines()[1] == "latin1.txt:1: caf\ufffd = 1"


async def test_outside_and_missing_paths_are_refused(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "x\n"})
    (tmp_path / "outside.py").write_text("x\n")
    for path in ("..", "../outside.py", str(tmp_path / "outside.py")):
        result = await search(root, pattern="x", path=path)
        assert not result.ok and "outside the workspace" in result.output, path
    missing = await search(root, pattern="x", path="nope")
    assert not missing.ok and "does not exist" in missing.output and "find_files" in missing.output


def test_parse_line_reads_match_and_context_lines() -> None:
    match = parse_line("./dir/a:b.py\x0012\x00text: with\x00nul")
    assert match is not None and match[0] == "dir/a:b.py"
    assert (match[1].number, match[1].text, match[1].is_match) == (12, "text: with\x00nul", True)
    context = parse_line("a.py\x003\x01  indented\r")
    assert context is not None and (context[1].text, context[1].is_match) == ("  indented", False)
    assert parse_line("--") is None
    assert parse_line("a.py\x00: binary file matches") is None


@pytest.mark.parametrize(
    ("glob", "path", "selected"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "a/b/c.pyc", False),
        ("conftest.py", "deep/down/conftest.py", True),
        ("**/*.py", "x.py", True),
        ("src/**/*.py", "src/x.py", True),
        ("src/**/*.py", "src/a/b/x.py", True),
        ("src/**/*.py", "lib/src/x.py", False),
        ("src/*.py", "src/a/x.py", False),
        ("./src/*.py", "src/x.py", True),
        ("src/", "src/a/b.txt", True),
        ("*.{ts,tsx}", "a/b.tsx", True),
        ("*.{ts,tsx}", "a/b.js", False),
        ("test_[a-c].py", "t/test_b.py", True),
        ("test_[!a-c].py", "t/test_b.py", False),
        ("!*.md", "README.md", False),
        ("!*.md", "a.py", True),
        ("*/tests/*.py", "pkg/tests/t.py", True),
        ("*/tests/*.py", "a/pkg/tests/t.py", False),
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
    ],
)
def test_glob_semantics(glob: str, path: str, selected: bool) -> None:
    assert compile_glob(glob).matches(path) is selected


def test_glob_name_part_used_to_prefilter() -> None:
    assert compile_glob("src/app/**/test_*.ts").name_part == "test_*.ts"
    assert compile_glob("{src,lib}/**/*.py").name_part == "*.py"
    assert compile_glob("src/{a/b,c}.py").name_part is None
    assert compile_glob("src/**").name_part is None
    with pytest.raises(GlobError, match="unclosed character class"):
        compile_glob("a[b")
