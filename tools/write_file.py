"""write_file: create a file or replace all of it, keeping its encoding, line endings and mode."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from keel.prompts import plural
from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.editing.edit_support import (
    check_fresh,
    lint_introduced,
    lint_snapshot,
    load_text,
    save_checked,
    unified_diff,
)
from keel.tools.editing.fileio import TextFormat, conform


class WriteFileArgs(ToolArgs):
    path: str = Field(
        description="The file to create or overwrite, relative to the workspace root."
    )
    content: str = Field(description="The complete content of the file.")


def kept_format_note(fmt: TextFormat) -> str:
    """What was kept that a model would not guess (CRLF, BOM, legacy encoding, no final newline)."""
    kept = []
    if fmt.mixed is not None:
        kept.append("mixed CRLF/LF line endings (unchanged lines keep their own)")
    elif fmt.newline == "\r\n":
        kept.append("CRLF line endings")
    if fmt.bom or fmt.codec != "utf-8":
        kept.append(f"{fmt.label} encoding")
    if fmt.final_newline is False:
        kept.append("no newline at end of file")
    return f" Kept the file's {', '.join(kept)}." if kept else ""


def missing_ancestors(path: Path, root: Path) -> list[Path]:
    """The directories that writing `path` will create, outermost first."""
    missing = []
    parent = path.parent
    while parent != root and not parent.exists():
        missing.append(parent)
        parent = parent.parent
    return list(reversed(missing))


def _in_file_form(content: str, old_text: str) -> str:
    """The model's content with "\\n" endings, for a file that has endings of its own to keep.

    An empty file has none, so its content is written as given, like a new file's.
    """
    return content.replace("\r\n", "\n") if old_text else content


def count_lines(text: str) -> int:
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


class WriteFileTool(Tool[WriteFileArgs]):
    name = "write_file"
    kind = ToolKind.EDIT
    Args = WriteFileArgs
    description = (
        "Create a file with `content`, or replace an existing file's entire content. Missing "
        "parent directories are created. To overwrite an existing file you must have read it in "
        "this session; its encoding, line endings (CRLF stays CRLF), final newline and "
        "permissions are kept. To change part of an existing file use edit_file or apply_patch "
        "instead: they send less text and can't drop code by accident."
    )

    async def run(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve_writable(args.path)
        name = ctx.relative(path)
        if path.is_dir():
            raise ToolError(f"{name} is a directory; give a file path")
        existed = path.exists()
        if existed:
            if path not in ctx.read_stamps:
                raise ToolError(
                    f"{name} already exists and you have not read it in this session; read it with "
                    "read_file first (and prefer edit_file or apply_patch to change part of it)"
                )
            check_fresh(ctx, path)
            current = load_text(ctx, path)
            old_text, fmt, mode = current.text, current.format, current.mode
            new_text = conform(_in_file_form(args.content, old_text), fmt)
            if new_text == old_text:
                return ToolResult(
                    output=f"{name} already has exactly this content; nothing changed.",
                    unchanged=True,
                )
        else:
            old_text, fmt, mode, new_text = "", TextFormat(), None, args.content
        created = missing_ancestors(path, ctx.root)
        before = await lint_snapshot([path], ctx) if existed else None
        save_checked(ctx, path, new_text, fmt, mode)
        ctx.note_written(path)
        lines = count_lines(new_text)
        if existed:
            summary = f"Wrote {name} ({plural(lines, 'line')}, was {count_lines(old_text)}).{kept_format_note(fmt)}"
        else:
            summary = f"Created {name} ({plural(lines, 'line')})."
        if created:
            summary += (
                " Created directories: " + ", ".join(ctx.relative(d) + "/" for d in created) + "."
            )
        summary += await lint_introduced(before, [path], ctx)
        return ToolResult(
            output=summary, diff=unified_diff(old_text, new_text, name if existed else None, name)
        )
