"""Line endings and final newlines, byte for byte, through edit_file, apply_patch and write_file."""

from __future__ import annotations

from pathlib import Path

import pytest

from keel.tools.apply_patch import ApplyPatchTool
from keel.tools.base import ToolContext, ToolResult
from keel.tools.edit_file import EditFileTool
from keel.tools.read_file import ReadFileTool
from keel.tools.registry import ToolRegistry
from keel.tools.write_file import WriteFileTool

REGISTRY = ToolRegistry([ReadFileTool(), WriteFileTool(), EditFileTool(), ApplyPatchTool()])

# Each file has a line "three" that the tests change to "THREE"; every other byte must stay.
FILES: dict[str, tuple[bytes, bytes]] = {
    "mixed.txt": (
        b"one\r\ntwo\nthree\r\nfour\nfive\r\n",
        b"one\r\ntwo\nTHREE\r\nfour\nfive\r\n",
    ),
    "mostly_lf.txt": (
        b"one\ntwo\r\nthree\nfour\r\nfive\nsix\n",
        b"one\ntwo\r\nTHREE\nfour\r\nfive\nsix\n",
    ),
    "crlf.txt": (b"one\r\nthree\r\nfive\r\n", b"one\r\nTHREE\r\nfive\r\n"),
    "lf.txt": (b"one\nthree\nfive\n", b"one\nTHREE\nfive\n"),
    "no_final_newline.txt": (b"one\nthree\nfive", b"one\nTHREE\nfive"),
    "mixed_no_final_newline.txt": (b"one\r\nthree\nfive", b"one\r\nTHREE\nfive"),
}


async def call(ctx: ToolContext, name: str, **arguments: object) -> ToolResult:
    tool, args = REGISTRY.validate(name, arguments)
    return await REGISTRY.run(tool, args, ctx)


async def edit(ctx: ToolContext, path: str, old: str, new: str) -> ToolResult:
    return await call(ctx, "edit_file", path=path, old_string=old, new_string=new)


def put_files(root: Path) -> None:
    for name, (before, _) in FILES.items():
        (root / name).write_bytes(before)


def assert_files_changed_only_in_line_three(root: Path) -> None:
    for name, (_, after) in FILES.items():
        assert (root / name).read_bytes() == after, name


async def test_edit_file_keeps_every_other_lines_ending(ctx: ToolContext) -> None:
    put_files(ctx.root)
    for name in FILES:
        result = await edit(ctx, name, "three", "THREE")
        assert result.ok, result.output
    assert_files_changed_only_in_line_three(ctx.root)


async def test_apply_patch_keeps_every_other_lines_ending(ctx: ToolContext) -> None:
    put_files(ctx.root)
    sections = "".join(f"*** Update File: {name}\n@@\n-three\n+THREE\n" for name in FILES)
    result = await call(ctx, "apply_patch", patch=f"*** Begin Patch\n{sections}*** End Patch\n")
    assert result.ok, result.output
    assert_files_changed_only_in_line_three(ctx.root)


async def test_write_file_keeps_every_other_lines_ending(ctx: ToolContext) -> None:
    put_files(ctx.root)
    for name, (before, _) in FILES.items():
        assert (await call(ctx, "read_file", path=name)).ok
        # the model sends "\n" text, or for some files "\r\n" text: the file's endings win
        content = before.decode().replace("\r\n", "\n").replace("three", "THREE")
        if name in ("crlf.txt", "mixed.txt"):
            content = content.replace("\n", "\r\n")
        result = await call(ctx, "write_file", path=name, content=content)
        assert result.ok, result.output
    assert_files_changed_only_in_line_three(ctx.root)


async def test_mixed_file_reports_its_mixed_endings(ctx: ToolContext) -> None:
    path = ctx.root / "m.txt"
    path.write_bytes(b"a\r\nb\nc\r\n")
    assert (await call(ctx, "read_file", path="m.txt")).ok
    result = await call(ctx, "write_file", path="m.txt", content="a\nB\nc\n")
    assert result.ok, result.output
    assert "Kept the file's mixed CRLF/LF line endings" in result.output
    assert path.read_bytes() == b"a\r\nB\nc\r\n"


async def test_added_lines_take_the_ending_of_the_line_above(ctx: ToolContext) -> None:
    path = ctx.root / "m.txt"
    path.write_bytes(b"one\r\ntwo\nthree\r\n")
    assert (await edit(ctx, "m.txt", "two\n", "two\nadded\n")).ok
    assert path.read_bytes() == b"one\r\ntwo\nadded\nthree\r\n"
    assert (await edit(ctx, "m.txt", "three\n", "three\nmore\n")).ok
    assert path.read_bytes() == b"one\r\ntwo\nadded\nthree\r\nmore\r\n"


async def test_a_new_last_line_of_a_mixed_file_gets_the_dominant_ending(ctx: ToolContext) -> None:
    path = ctx.root / "m.txt"
    path.write_bytes(b"a\r\nb\nc\r\nd")
    assert (await edit(ctx, "m.txt", "d", "d\ne")).ok
    assert path.read_bytes() == b"a\r\nb\nc\r\nd\r\ne"


async def test_removed_and_replaced_lines_keep_the_rest_of_a_mixed_file(
    ctx: ToolContext,
) -> None:
    path = ctx.root / "m.txt"
    path.write_bytes(b"a\r\nb\nc\r\nd\ne\r\n")
    assert (await edit(ctx, "m.txt", "b\nc\n", "C\n")).ok
    assert path.read_bytes() == b"a\r\nC\nd\ne\r\n"
    assert (await edit(ctx, "m.txt", "C\nd\n", "x\ny\nz\n")).ok
    assert path.read_bytes() == b"a\r\nx\ny\nz\ne\r\n"


STRAY_CR = {
    "crlf.txt": (b"keep\r\r\nedit me\r\nlast\r\n", b"keep\r\r\nedited\r\nlast\r\n"),
    "lf.txt": (b"keep\r\r\nedit me\nlast\n", b"keep\r\r\nedited\nlast\n"),
}


@pytest.mark.parametrize("name", sorted(STRAY_CR))
async def test_stray_cr_before_crlf_survives_edit_file(ctx: ToolContext, name: str) -> None:
    before, after = STRAY_CR[name]
    (ctx.root / name).write_bytes(before)
    result = await edit(ctx, name, "edit me", "edited")
    assert result.ok, result.output
    assert (ctx.root / name).read_bytes() == after


@pytest.mark.parametrize("name", sorted(STRAY_CR))
async def test_stray_cr_before_crlf_survives_apply_patch(ctx: ToolContext, name: str) -> None:
    before, after = STRAY_CR[name]
    (ctx.root / name).write_bytes(before)
    patch = f"*** Begin Patch\n*** Update File: {name}\n-edit me\n+edited\n last\n*** End Patch"
    result = await call(ctx, "apply_patch", patch=patch)
    assert result.ok, result.output
    assert (ctx.root / name).read_bytes() == after


@pytest.mark.parametrize("name", sorted(STRAY_CR))
async def test_stray_cr_line_quoted_as_context_survives_both_tools(
    ctx: ToolContext, name: str
) -> None:
    before, after = STRAY_CR[name]
    for path in (ctx.root / f"edit_{name}", ctx.root / f"patch_{name}"):
        path.write_bytes(before)
    result = await edit(ctx, f"edit_{name}", "keep\nedit me", "keep\nedited")
    assert result.ok, result.output
    patch = (
        f"*** Begin Patch\n*** Update File: patch_{name}\n keep\n-edit me\n+edited\n*** End Patch"
    )
    result = await call(ctx, "apply_patch", patch=patch)
    assert result.ok, result.output
    assert (ctx.root / f"edit_{name}").read_bytes() == after
    assert (ctx.root / f"patch_{name}").read_bytes() == after


CONTENTS = ["x = 1\ny = 2\n", "x = 1\ny = 2"]


async def test_edit_file_writes_new_and_empty_files_as_given(ctx: ToolContext) -> None:
    for number, content in enumerate(CONTENTS):
        new, empty = ctx.root / f"new{number}.py", ctx.root / f"empty{number}.py"
        empty.write_bytes(b"")
        assert (await edit(ctx, new.name, "", content)).ok
        assert (await edit(ctx, empty.name, "", content)).ok
        assert new.read_bytes() == empty.read_bytes() == content.encode(), content


async def test_write_file_writes_new_and_empty_files_as_given(ctx: ToolContext) -> None:
    for number, content in enumerate(CONTENTS):
        new, empty = ctx.root / f"new{number}.py", ctx.root / f"empty{number}.py"
        empty.write_bytes(b"")
        assert (await call(ctx, "read_file", path=empty.name)).ok
        assert (await call(ctx, "write_file", path=new.name, content=content)).ok
        result = await call(ctx, "write_file", path=empty.name, content=content)
        assert result.ok, result.output
        assert "newline" not in result.output
        assert new.read_bytes() == empty.read_bytes() == content.encode(), content


async def test_empty_file_filled_as_given_while_patch_lines_stay_whole(ctx: ToolContext) -> None:
    (ctx.root / "empty.txt").write_bytes(b"")
    (ctx.root / "patched.txt").write_bytes(b"")
    assert (await edit(ctx, "empty.txt", "", "no newline")).ok
    assert (ctx.root / "empty.txt").read_bytes() == b"no newline"
    patch = (
        "*** Begin Patch\n*** Update File: patched.txt\n+a line\n"
        "*** Add File: added.txt\n+whole line\n*** End Patch"
    )
    result = await call(ctx, "apply_patch", patch=patch)
    assert result.ok, result.output
    assert (ctx.root / "patched.txt").read_bytes() == b"a line\n"
    assert (ctx.root / "added.txt").read_bytes() == b"whole line\n"


# A patch says which of two equal lines it removes and which it keeps: the kept one keeps its ending.
REPEATED_CONTEXT = {
    "first removed, second kept": (b"same\r\nsame\n", "-same\n same", b"same\n"),
    "second removed, first kept": (b"same\r\nsame\n", " same\n-same", b"same\r\n"),
    "added above two equal lines": (
        b"pass\r\npass\n",
        "+pass\n pass\n pass",
        b"pass\npass\r\npass\n",
    ),
    "one of three replaced": (
        b"x = 1\r\nx = 1\nx = 1\r\nend\n",
        " x = 1\n-x = 1\n-x = 1\n+x = 2\n end",
        b"x = 1\r\nx = 2\nend\n",
    ),
}


@pytest.mark.parametrize("case", sorted(REPEATED_CONTEXT))
async def test_apply_patch_keeps_the_ending_of_the_repeated_line_it_keeps(
    ctx: ToolContext, case: str
) -> None:
    before, hunk, after = REPEATED_CONTEXT[case]
    (ctx.root / "m.txt").write_bytes(before)
    patch = f"*** Begin Patch\n*** Update File: m.txt\n@@\n{hunk}\n*** End Patch"
    result = await call(ctx, "apply_patch", patch=patch)
    assert result.ok, result.output
    assert (ctx.root / "m.txt").read_bytes() == after
