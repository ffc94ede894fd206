"""read_file on real files: numbering, ranges, long lines, encodings, binary, huge, directories."""

from __future__ import annotations

from keel.tools.base import FileStamp, ToolContext, ToolResult
from keel.tools.read_file import HUGE_FILE_BYTES, MAX_LINE_CHARS, ReadFileTool
from keel.tools.registry import ToolRegistry


async def read(ctx: ToolContext, **arguments) -> ToolResult:
    registry = ToolRegistry([ReadFileTool()])
    tool, args = registry.validate("read_file", arguments)
    return await registry.run(tool, args, ctx)


async def test_numbered_lines_like_cat_n_and_the_read_is_recorded(ctx: ToolContext) -> None:
    path = ctx.root / "a.py"
    path.write_text("import os\n\tindented\n")
    result = await read(ctx, path="a.py")
    assert result.ok
    assert result.output == "     1\timport os\n     2\t\tindented"
    assert ctx.read_stamps[path] == FileStamp.of(path)


async def test_range_with_footer_saying_how_to_read_more(ctx: ToolContext) -> None:
    (ctx.root / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    result = await read(ctx, path="long.txt", offset=10, limit=5)
    lines = result.output.split("\n")
    assert lines[0] == "    10\tline 10" and lines[4] == "    14\tline 14"
    assert "Showing lines 10-14 of 100" in result.output and "offset=15" in result.output
    whole = await read(ctx, path="long.txt")
    assert "Showing" not in whole.output and whole.output.count("\n") == 99


async def test_offset_past_the_end_says_how_long_the_file_is(ctx: ToolContext) -> None:
    (ctx.root / "s.txt").write_text("one\ntwo\n")
    result = await read(ctx, path="s.txt", offset=9)
    assert not result.ok and "has 2 lines" in result.output


async def test_overlong_lines_are_cut_with_a_note(ctx: ToolContext) -> None:
    (ctx.root / "min.js").write_text("x" * (MAX_LINE_CHARS + 500) + "\nshort\n")
    result = await read(ctx, path="min.js")
    first, second = result.output.split("\n")
    assert first.endswith("[... line cut: 500 more characters]")
    assert len(first) < MAX_LINE_CHARS + 60
    assert second == "     2\tshort"


async def test_binary_file_refused_with_what_to_do(ctx: ToolContext) -> None:
    (ctx.root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    result = await read(ctx, path="img.png")
    assert not result.ok
    assert "binary" in result.output and "run_command" in result.output


async def test_huge_file_needs_an_explicit_range(ctx: ToolContext) -> None:
    line = "0123456789" * 9 + "\n"
    (ctx.root / "big.log").write_text(line * (HUGE_FILE_BYTES // len(line) + 10))
    refused = await read(ctx, path="big.log")
    assert not refused.ok and "offset" in refused.output and "search" in refused.output
    part = await read(ctx, path="big.log", offset=3, limit=2)
    assert part.ok and part.output.startswith("     3\t0123") and "offset=5" in part.output


async def test_crlf_bom_and_latin1_are_shown_as_plain_text(ctx: ToolContext) -> None:
    (ctx.root / "w.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    assert (await read(ctx, path="w.txt")).output == "     1\tone\n     2\ttwo"
    (ctx.root / "l.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    result = await read(ctx, path="l.txt")
    assert "Latin-1" in result.output and "     1\tcafé" in result.output


async def test_directory_lists_entries_with_slashes(ctx: ToolContext) -> None:
    (ctx.root / "src" / "pkg").mkdir(parents=True)
    (ctx.root / "src" / "main.py").write_text("")
    (ctx.root / "src" / ".env").write_text("")
    result = await read(ctx, path="src")
    assert result.ok
    assert result.output.split("\n")[1:] == [".env", "main.py", "pkg/"]
    assert "3 entries" in result.output


async def test_missing_file_suggests_close_names(ctx: ToolContext) -> None:
    (ctx.root / "config.yaml").write_text("a: 1\n")
    result = await read(ctx, path="config.yml")
    assert not result.ok and "config.yaml" in result.output


async def test_empty_file_and_paths_outside_the_workspace(ctx: ToolContext) -> None:
    (ctx.root / "empty.txt").write_text("")
    assert "empty" in (await read(ctx, path="empty.txt")).output
    outside = await read(ctx, path="../scratch.txt")
    assert not outside.ok and "outside the workspace" in outside.output


async def test_an_invented_absolute_path_is_answered_with_the_file_it_names(
    ctx: ToolContext,
) -> None:
    (ctx.root / "pkg").mkdir()
    (ctx.root / "pkg" / "calc.py").write_text("x = 1\n")
    result = await read(ctx, path="/home/keel/pkg/calc.py")
    assert not result.ok and "did you mean 'pkg/calc.py'?" in result.output
    nothing = await read(ctx, path="/home/keel/other.py")
    assert not nothing.ok and "did you mean" not in nothing.output
