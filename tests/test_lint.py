"""The lint engine (real ruff, tree-sitter and subprocesses) and the `lint` tool, on temp dirs."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from keel.tools.base import ToolContext
from keel.tools.lint import LintArgs, LintTool
from keel.tools.linting.linter_process import LinterFailed, LinterJail, run_process
from keel.tools.linting.linters import Diagnostic, check_paths, introduced
from keel.tools.registry import ToolRegistry


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace.resolve()


def make_ctx(root: Path, changed: list[Path] = ()) -> ToolContext:
    scratch = root.parent / "scratch"
    scratch.mkdir(exist_ok=True)
    return ToolContext(root=root, scratch=scratch, changed_files=set(changed))


def jail(root: Path) -> LinterJail:
    """The jail the lint tool would run linters in, for a session in `root`."""
    return LinterJail.of(make_ctx(root))


async def run_lint(ctx: ToolContext, paths: list[str] | None = None) -> tuple[str, bool]:
    registry = ToolRegistry([LintTool()])
    tool, args = registry.validate("lint", {} if paths is None else {"paths": paths})
    result = await registry.run(tool, args, ctx)
    return result.output, result.ok


# ---------------------------------------------------------------- the engine


async def test_python_undefined_name_comes_from_ruff(root: Path) -> None:
    path = write(root, "pkg/mod.py", "import os\n\nprint(os.sep, undefined_thing)\n")
    diagnostics = await check_paths([path], jail(root))
    assert [(d.path, d.line, d.col, d.code, d.source) for d in diagnostics] == [
        ("pkg/mod.py", 3, 15, "F821", "ruff")
    ]
    assert str(diagnostics[0]) == "pkg/mod.py:3:15: F821 Undefined name `undefined_thing`"


async def test_python_syntax_error_is_reported_once_by_ruff(root: Path) -> None:
    path = write(root, "bad.py", "x = 1\ndef f(:\n    pass\n")
    diagnostics = await check_paths([path], jail(root))
    assert diagnostics, "a syntax error must be reported"
    assert {d.source for d in diagnostics} == {"ruff"}
    assert diagnostics[0].line == 2 and diagnostics[0].message.startswith("syntax error")
    assert diagnostics[0].code == ""


SYNTAX_ERRORS = {
    "a.js": ("const a = 1;\nfunction ok() { return a; }\nconst b = (1 + ;\n", 3),
    "a.ts": ("const a: number = 1;\n\nlet b: = 2;\n", 3),
    "a.go": ("package main\n\nfunc main() { x := 1 +  }\n", 3),
    "a.rs": ("fn main() {\n    let a = 1;\n    let b = a + ;\n}\n", 3),
    "a.rb": ("def ok\nend\ndef broken(\n", 3),
    "a.c": ("int ok(void) { return 0; }\n\nint broken(void) { return 1 }\n", 3),
    "A.java": ("class A {\n  void f() {\n    int x = ;\n  }\n}\n", 3),
}


@pytest.mark.parametrize("name", sorted(SYNTAX_ERRORS))
async def test_syntax_error_found_on_the_right_line(root: Path, name: str) -> None:
    text, line = SYNTAX_ERRORS[name]
    path = write(root, name, text)
    diagnostics = await check_paths([path], jail(root))
    assert diagnostics, f"no problem found in {name}"
    first = diagnostics[0]
    assert (first.path, first.line) == (name, line)
    assert "syntax error" in first.message or first.source != "tree-sitter"


CLEAN = {
    "ok.py": "import os\n\nprint(os.sep)\n",
    "ok.js": "export function add(a, b) {\n  return a + b;\n}\n",
    "ok.ts": "export const n: number = 1;\n",
    "ok.go": "package main\n\nfunc main() {}\n",
    "ok.rs": "fn main() {\n    let _a = 1;\n}\n",
    "ok.rb": "def ok\n  1\nend\n",
    "ok.c": "int main(void) { return 0; }\n",
    "ok.sh": "#!/bin/bash\nif true; then\n  echo hi\nfi\n",
    "ok.json": '{"a": [1, 2]}\n',
    "ok.toml": 'a = "b"\n',
}


async def test_clean_files_have_no_problems(root: Path) -> None:
    paths = [write(root, name, text) for name, text in CLEAN.items()]
    assert await check_paths(paths, jail(root)) == []


async def test_shell_json_and_toml_errors(root: Path) -> None:
    shell = write(root, "run.sh", "#!/bin/bash\nif true; then\n  echo hi\n")
    data = write(root, "data.json", '{\n  "a": 1,\n}\n')
    config = write(root, "conf.toml", 'a = "b"\nc =\n')
    found = {d.path: d for d in await check_paths([shell, data, config], jail(root))}
    assert set(found) == {"run.sh", "data.json", "conf.toml"}
    assert found["data.json"].line == 3 and found["data.json"].message.startswith("invalid JSON")
    assert found["conf.toml"].line == 2 and found["conf.toml"].message.startswith("invalid TOML")
    assert found["run.sh"].source in {"bash", "tree-sitter"}


async def test_deleted_and_unsupported_files_are_skipped(root: Path) -> None:
    notes = write(root, "notes.md", "# not code (\n")
    assert await check_paths([root / "gone.py", notes], jail(root)) == []


async def test_repo_ruff_config_is_respected_and_a_broken_one_falls_back(root: Path) -> None:
    path = write(root, "uses_builtin.py", "print(special_builtin, other_name)\n")
    write(root, "pyproject.toml", '[tool.ruff]\nbuiltins = ["special_builtin"]\n')
    assert [d.message for d in await check_paths([path], jail(root))] == [
        "Undefined name `other_name`"
    ]
    write(root, "pyproject.toml", "[tool.ruff\n")  # broken: ruff exits 2; we retry --isolated
    found = await check_paths([path], jail(root))
    assert {d.code for d in found} == {"F821"} and len(found) == 2


async def test_a_missing_or_hanging_linter_raises_linter_failed(root: Path) -> None:
    with pytest.raises(LinterFailed, match="could not start"):
        await run_process(jail(root), ["/nonexistent/linter-binary"], root, 5)
    with pytest.raises(LinterFailed, match="timed out"):
        await run_process(jail(root), ["sleep", "30"], root, 0.2)


# ---------------------------------------------------------------- introduced()


def diag(path: str, line: int, message: str, code: str = "F821") -> Diagnostic:
    return Diagnostic(path=path, line=line, col=1, message=message, code=code, source="ruff")


def test_introduced_matches_as_a_multiset_ignoring_lines() -> None:
    before = [diag("a.py", 3, "Undefined name `x`"), diag("a.py", 9, "Undefined name `x`")]
    after = [
        diag("a.py", 7, "Undefined name `x`"),
        diag("a.py", 13, "Undefined name `x`"),
        diag("a.py", 20, "Undefined name `x`"),
        diag("b.py", 7, "Undefined name `x`"),
    ]
    assert introduced(before, after) == [after[2], after[3]]
    assert introduced(after, before) == []


async def test_introduced_after_a_real_edit_shifts_lines(root: Path) -> None:
    path = write(root, "m.py", "def f():\n    return old_missing\n")
    before = await check_paths([path], jail(root))
    path.write_text(
        "import os\n\n\ndef f():\n    return old_missing\n\n\ndef g():\n    return new_missing\n"
    )
    after = await check_paths([path], jail(root))
    new = introduced(before, after)
    assert [(d.line, d.code) for d in after] == [(1, "F401"), (5, "F821"), (9, "F821")]
    assert [(d.line, d.message) for d in new] == [
        (1, "`os` imported but unused"),
        (9, "Undefined name `new_missing`"),
    ]


# ---------------------------------------------------------------- the lint tool


async def test_lint_tool_defaults_to_the_files_changed_in_this_session(root: Path) -> None:
    changed = write(root, "changed.py", "print(missing_a)\n")
    write(root, "untouched.py", "print(missing_b)\n")
    output, ok = await run_lint(make_ctx(root, [changed]))
    assert ok
    assert output.splitlines() == [
        "1 problem in 1 of 1 file:",
        "changed.py:1:7: F821 Undefined name `missing_a`",
    ]


async def test_lint_tool_with_nothing_changed_says_so(root: Path) -> None:
    output, ok = await run_lint(make_ctx(root))
    assert ok and "no files have been changed" in output and '"paths"' in output
    readme = write(root, "README.md", "hi\n")
    output, _ = await run_lint(make_ctx(root, [readme]))
    assert "README.md" in output and "can be linted" in output


async def test_lint_tool_reports_clean_files(root: Path) -> None:
    paths = [write(root, name, text) for name, text in CLEAN.items() if not name.endswith(".rs")]
    output, ok = await run_lint(make_ctx(root, paths))
    assert ok and output == f"No problems found in {len(paths)} files."


async def test_lint_tool_refuses_paths_outside_the_workspace(root: Path) -> None:
    outside = write(root.parent, "outside.py", "print(nope)\n")
    output, ok = await run_lint(make_ctx(root), [str(outside)])
    assert not ok and "outside the workspace" in output
    output, ok = await run_lint(make_ctx(root), ["../outside.py"])
    assert not ok and "outside the workspace" in output
    output, ok = await run_lint(make_ctx(root), ["no_such_file.py"])
    assert not ok and "does not exist" in output


async def test_lint_tool_expands_directories_honouring_gitignore(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # noqa: ASYNC221 - setup, nothing runs yet
    write(root, ".gitignore", "generated/\n")
    write(root, "src/app.py", "print(app_missing)\n")
    write(root, "src/lib/util.js", "function f( {\n")
    write(root, "src/README.md", "prose (\n")
    write(root, "generated/out.py", "print(generated_missing)\n")
    write(root, "node_modules/dep/index.js", "function broken( {\n")
    output, ok = await run_lint(make_ctx(root), ["."])
    assert ok
    assert output.splitlines()[0] == "2 problems in 2 of 2 files:"
    assert "src/app.py:1:7: F821 Undefined name `app_missing`" in output
    assert "src/lib/util.js:1:" in output
    assert "generated" not in output and "node_modules" not in output


async def test_lint_tool_caps_its_output(root: Path) -> None:
    path = write(root, "many.py", "".join(f"print(missing_{i})\n" for i in range(130)))
    output, _ = await run_lint(make_ctx(root, [path]))
    lines = output.splitlines()
    assert lines[0] == "130 problems in 1 of 1 file:"
    assert len(lines) == 1 + 100 + 1
    assert lines[-1].startswith("... 30 more not shown")


def test_lint_args_schema_default_is_none() -> None:
    assert LintArgs().paths is None
    assert LintTool.kind.value == "read"


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
async def test_go_vet_reports_package_problems(root: Path) -> None:
    write(root, "go.mod", "module example.com/m\n\ngo 1.21\n")
    path = write(
        root,
        "main.go",
        'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Printf("%d\\n", "text")\n}\n',
    )
    output, _ = await run_lint(make_ctx(root, [path]))
    assert "main.go:6:" in output


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
async def test_cargo_check_reports_type_errors_in_the_lint_tool(root: Path) -> None:
    write(root, "Cargo.toml", '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n')
    path = write(root, "src/main.rs", 'fn main() {\n    let n: i32 = "text";\n    let _ = n;\n}\n')
    assert await check_paths([path], jail(root)) == []  # type errors are beyond the per-edit check
    output, ok = await run_lint(make_ctx(root, [path]))
    assert ok and "src/main.rs:2:18: E0308 mismatched types" in output, output
