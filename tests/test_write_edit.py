"""write_file and edit_file on real files: formats kept, match cascade, stale files, lint."""

from __future__ import annotations

import os
from pathlib import Path

from keel.tools.base import ToolContext, ToolResult
from keel.tools.edit_file import EditFileTool
from keel.tools.read_file import ReadFileTool
from keel.tools.registry import ToolRegistry
from keel.tools.write_file import WriteFileTool

REGISTRY = ToolRegistry([ReadFileTool(), WriteFileTool(), EditFileTool()])


async def call(ctx: ToolContext, name: str, **arguments) -> ToolResult:
    tool, args = REGISTRY.validate(name, arguments)
    return await REGISTRY.run(tool, args, ctx)


async def edit(ctx: ToolContext, path: str, old: str, new: str, **extra) -> ToolResult:
    return await call(ctx, "edit_file", path=path, old_string=old, new_string=new, **extra)


def no_temp_files(directory: Path) -> bool:
    return not [p for p in directory.iterdir() if p.name.endswith(".tmp")]


async def test_crlf_file_stays_crlf_when_edited_with_lf_strings(ctx: ToolContext) -> None:
    path = ctx.root / "win.txt"
    path.write_bytes(b"first\r\nsecond\r\nthird\r\n")
    result = await edit(ctx, "win.txt", "first\nsecond\n", "first\nSECOND\nadded\n")
    assert result.ok, result.output
    assert path.read_bytes() == b"first\r\nSECOND\r\nadded\r\nthird\r\n"
    assert "-second\n+SECOND\n+added\n" in result.diff
    assert no_temp_files(ctx.root)


async def test_tab_indented_file_edited_with_space_indentation(ctx: ToolContext) -> None:
    path = ctx.root / "main.go"
    path.write_text("func main() {\n\tif ok {\n\t\trun()\n\t}\n}\n")
    result = await edit(
        ctx,
        "main.go",
        "    if ok {\n        run()\n    }",
        "    if ok {\n        prepare()\n        run()\n    }",
    )
    assert result.ok, result.output
    assert path.read_text() == "func main() {\n\tif ok {\n\t\tprepare()\n\t\trun()\n\t}\n}\n"
    assert "indentation was ignored" in result.output
    assert "     3\t\t\tprepare()" in result.output


async def test_curly_quotes_in_the_file_match_straight_quotes(ctx: ToolContext) -> None:
    path = ctx.root / "notes.md"
    path.write_text("He said “don’t panic” – then left.\nEnd.\n")
    result = await edit(ctx, "notes.md", 'He said "don\'t panic" - then left.', "He said: relax.")
    assert result.ok, result.output
    assert path.read_text() == "He said: relax.\nEnd.\n"
    assert "normalizing quotes" in result.output


async def test_ambiguous_match_is_refused_with_count_and_lines(ctx: ToolContext) -> None:
    path = ctx.root / "dup.py"
    path.write_text("x = 1\nprint(x)\nx = 1\n")
    result = await edit(ctx, "dup.py", "x = 1", "x = 2")
    assert not result.ok
    assert "2 places" in result.output and "lines 1, 3" in result.output
    assert path.read_text() == "x = 1\nprint(x)\nx = 1\n"
    result = await edit(ctx, "dup.py", "x = 1", "x = 2", replace_all=True)
    assert result.ok and path.read_text() == "x = 2\nprint(x)\nx = 2\n"
    assert "2 occurrences at lines 1, 3" in result.output


async def test_stale_file_is_refused_until_read_again(ctx: ToolContext) -> None:
    path = ctx.root / "s.py"
    path.write_text("a = 1\n")
    assert (await call(ctx, "read_file", path="s.py")).ok
    path.write_text("a = 1\nb = 2\n")  # changed behind the agent's back
    result = await edit(ctx, "s.py", "a = 1", "a = 3")
    assert not result.ok and "changed on disk" in result.output and "read it again" in result.output
    assert path.read_text() == "a = 1\nb = 2\n"
    write = await call(ctx, "write_file", path="s.py", content="gone\n")
    assert not write.ok and "changed on disk" in write.output
    assert (await call(ctx, "read_file", path="s.py")).ok
    assert (await edit(ctx, "s.py", "a = 1", "a = 3")).ok
    assert (await edit(ctx, "s.py", "b = 2", "b = 4")).ok  # our own write is not "stale"
    assert path.read_text() == "a = 3\nb = 4\n"


async def test_no_match_shows_closest_region_and_differing_line(ctx: ToolContext) -> None:
    path = ctx.root / "calc.py"
    body = "".join(f"CONST_{i} = {i}\n" for i in range(30))
    path.write_text(body + "def area(w, h):\n    return w * h\n")
    result = await edit(ctx, "calc.py", "def area(w, h):\n    return w + h\n", "x")
    assert not result.ok
    assert "calc.py: No match for old_string" in result.output
    assert "lines 31-32" in result.output
    assert "line 2 of old_string vs line 32 of the file" in result.output
    assert "expected:     return w + h" in result.output
    assert "actual:       return w * h" in result.output


async def test_mode_bom_and_missing_final_newline_are_kept(ctx: ToolContext) -> None:
    script = ctx.root / "run.sh"
    script.write_bytes(b"\xef\xbb\xbf#!/bin/sh\necho hi")
    script.chmod(0o755)
    result = await edit(ctx, "run.sh", "echo hi", "echo bye\n")
    assert result.ok, result.output
    assert script.read_bytes() == b"\xef\xbb\xbf#!/bin/sh\necho bye"
    assert script.stat().st_mode & 0o777 == 0o755
    assert "\\ No newline at end of file" in result.diff
    assert (await call(ctx, "write_file", path="run.sh", content="#!/bin/sh\nexit 0\n")).ok
    assert script.read_bytes() == b"\xef\xbb\xbf#!/bin/sh\nexit 0"
    assert script.stat().st_mode & 0o777 == 0o755


async def test_write_file_keeps_crlf_and_reports_it(ctx: ToolContext) -> None:
    path = ctx.root / "w.ini"
    path.write_bytes(b"[a]\r\nx=1\r\n")
    assert (await call(ctx, "read_file", path="w.ini")).ok
    result = await call(ctx, "write_file", path="w.ini", content="[a]\nx=2\n")
    assert result.ok and "CRLF" in result.output
    assert path.read_bytes() == b"[a]\r\nx=2\r\n"


async def test_latin1_file_stays_latin1(ctx: ToolContext) -> None:
    path = ctx.root / "legacy.txt"
    path.write_bytes("caf\xe9 = 1\n".encode("latin-1"))
    assert (await edit(ctx, "legacy.txt", "= 1", "= 2")).ok
    assert path.read_bytes() == "caf\xe9 = 2\n".encode("latin-1")
    refused = await edit(ctx, "legacy.txt", "= 2", "= \u2192")
    assert not refused.ok and "Latin-1" in refused.output


async def test_write_file_creates_parents_and_guards_unread_files(ctx: ToolContext) -> None:
    result = await call(ctx, "write_file", path="a/b/new.py", content="x = 1\n")
    assert result.ok and "Created directories: a/, a/b/" in result.output
    assert result.output.startswith("Created a/b/new.py (1 line).")
    assert (ctx.root / "a/b/new.py").read_text() == "x = 1\n"
    assert result.diff.startswith("--- /dev/null\n+++ b/a/b/new.py")
    assert (ctx.root / "a/b/new.py").stat().st_mode & 0o777 == 0o666 & ~_umask()
    (ctx.root / "old.txt").write_text("keep me\n")
    refused = await call(ctx, "write_file", path="old.txt", content="oops\n")
    assert not refused.ok and "read it" in refused.output
    assert (ctx.root / "old.txt").read_text() == "keep me\n"


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


async def test_edit_file_creation_and_argument_errors(ctx: ToolContext) -> None:
    created = await edit(ctx, "pkg/new.txt", "", "hello\n")
    assert created.ok and (ctx.root / "pkg/new.txt").read_text() == "hello\n"
    same = await edit(ctx, "pkg/new.txt", "hello", "hello")
    assert not same.ok and "the same" in same.output
    missing = await edit(ctx, "nope.txt", "a", "b")
    assert (
        not missing.ok
        and "does not exist" in missing.output
        and "empty old_string" in missing.output
    )
    nonempty = await edit(ctx, "pkg/new.txt", "", "more")
    assert not nonempty.ok and "write_file" in nonempty.output


async def test_editing_through_a_symlink_keeps_the_link(ctx: ToolContext) -> None:
    target = ctx.root / "real.txt"
    target.write_text("v1\n")
    (ctx.root / "link.txt").symlink_to("real.txt")
    assert (await edit(ctx, "link.txt", "v1", "v2")).ok
    assert (ctx.root / "link.txt").is_symlink() and target.read_text() == "v2\n"


async def test_lint_reports_only_problems_the_edit_introduced(ctx: ToolContext) -> None:
    path = ctx.root / "mod.py"
    path.write_text("import os\n\n\ndef f():\n    return 1\n")  # unused import: already there
    result = await edit(ctx, "mod.py", "return 1", "return undefined_name")
    assert result.ok
    assert "The edit introduced 1 lint problem:" in result.output
    assert "mod.py:5:12: F821" in result.output and "F401" not in result.output
    clean = await edit(ctx, "mod.py", "return undefined_name", "return 2")
    assert clean.ok and "lint" not in clean.output
    broken = await edit(ctx, "mod.py", "def f():", "def f(:")
    assert broken.ok and "introduced" in broken.output and "mod.py:4" in broken.output


async def test_read_only_file_is_refused(ctx: ToolContext) -> None:
    path = ctx.root / "locked.txt"
    path.write_text("v1\n")
    path.chmod(0o444)
    result = await edit(ctx, "locked.txt", "v1", "v2")
    assert not result.ok and "read-only" in result.output
    assert path.read_text() == "v1\n"
