"""apply_patch reads markers indented by spaces (as Codex does), and only those markers."""

from __future__ import annotations

from keel.tools.apply_patch import ApplyPatchTool
from keel.tools.base import ToolContext, ToolResult
from keel.tools.editing.patch_format import AddFile, DeleteFile, Hunk, UpdateFile, parse_patch
from keel.tools.read_file import ReadFileTool
from keel.tools.registry import ToolRegistry

REGISTRY = ToolRegistry([ReadFileTool(), ApplyPatchTool()])


async def patch(ctx: ToolContext, text: str) -> ToolResult:
    tool, args = REGISTRY.validate("apply_patch", {"patch": text})
    return await REGISTRY.run(tool, args, ctx)


async def test_indented_end_patch_ends_the_patch(ctx: ToolContext) -> None:
    path = ctx.root / "a.txt"
    path.write_text("x\ny\n")
    result = await patch(
        ctx, "*** Begin Patch\n*** Update File: a.txt\n@@\n x\n-y\n+z\n *** End Patch\n"
    )
    assert result.ok, result.output
    assert path.read_text() == "x\nz\n"


async def test_every_marker_may_be_indented_and_followed_by_spaces(ctx: ToolContext) -> None:
    (ctx.root / "a.txt").write_text("keep\nold\n")
    (ctx.root / "gone.txt").write_text("bye\n")
    text = (
        " *** Begin Patch  \n"
        "  *** Add File: new.txt  \n"
        "+hello\n"
        "  *** End of File \n"
        "\t*** Delete File: gone.txt\n"
        "  *** Update File: a.txt\n"
        "  *** Move to: b.txt \n"
        "@@\n"
        " keep\n"
        "-old\n"
        "+new\n"
        "   *** End of File\n"
        " *** End Patch \n"
    )
    result = await patch(ctx, text)
    assert result.ok, result.output
    assert (ctx.root / "new.txt").read_text() == "hello\n"
    assert not (ctx.root / "gone.txt").exists() and not (ctx.root / "a.txt").exists()
    assert (ctx.root / "b.txt").read_text() == "keep\nnew\n"
    ops = parse_patch(text)
    assert ops[0] == AddFile("new.txt", "hello\n") and ops[1] == DeleteFile("gone.txt")
    assert ops[2] == UpdateFile(
        "a.txt", "b.txt", [Hunk([], ["keep", "old"], ["keep", "new"], at_end_of_file=True)]
    )


async def test_ordinary_starred_context_lines_stay_context(ctx: ToolContext) -> None:
    path = ctx.root / "notes.md"
    path.write_text("*** important ***\n * comment\nold\n")
    text = (
        "*** Begin Patch\n*** Update File: notes.md\n"
        " *** important ***\n  * comment\n-old\n+new\n *** End Patch"
    )
    result = await patch(ctx, text)
    assert result.ok, result.output
    assert path.read_text() == "*** important ***\n * comment\nnew\n"


async def test_a_column_0_end_patch_wins_over_an_indented_one(ctx: ToolContext) -> None:
    path = ctx.root / "help.txt"
    path.write_text("Finish a patch with\n*** End Patch\nand nothing after.\n")
    text = (
        " *** Begin Patch\n *** Update File: help.txt\n"
        " Finish a patch with\n *** End Patch\n-and nothing after.\n+and send it.\n"
        "*** End Patch\n"
    )
    result = await patch(ctx, text)
    assert result.ok, result.output
    assert path.read_text() == "Finish a patch with\n*** End Patch\nand send it.\n"


def test_a_column_0_begin_patch_wins_over_an_indented_one() -> None:
    text = (
        "The patch starts at the line\n *** Begin Patch\nbelow.\n"
        "*** Begin Patch\n  *** Delete File: a.txt\n *** End Patch\n"
    )
    assert parse_patch(text) == [DeleteFile("a.txt")]
