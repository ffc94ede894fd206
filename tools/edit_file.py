"""edit_file: replace one piece of a file, found by a forgiving match cascade, never ambiguously."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from keel.prompts import render
from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.editing.edit_support import (
    changed_view,
    check_fresh,
    lint_introduced,
    lint_snapshot,
    load_text,
    save_checked,
    unified_diff,
)
from keel.tools.editing.fileio import TextFile, TextFormat, conform
from keel.tools.editing.matching import MatchError, replace_text


class EditFileArgs(ToolArgs):
    path: str = Field(description="The file to edit, relative to the workspace root.")
    old_string: str = Field(
        description="The exact text to replace, copied from the file (without "
        "read_file's line numbers); enough lines to be unique."
    )
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(
        False, description="Replace every occurrence of old_string, not just one."
    )


def _lines_label(lines: list[int]) -> str:
    if len(lines) == 1:
        return f"1 occurrence at line {lines[0]}"
    shown = ", ".join(str(n) for n in lines[:10]) + (", ..." if len(lines) > 10 else "")
    return f"{len(lines)} occurrences at lines {shown}"


class EditFileTool(Tool[EditFileArgs]):
    name = "edit_file"
    kind = ToolKind.EDIT
    Args = EditFileArgs
    description = (
        "Replace `old_string` with `new_string` in a file. Copy old_string from read_file output "
        "exactly, without the line-number prefix, with enough surrounding lines to match one place "
        "only; an ambiguous match is refused unless replace_all=true (which changes every "
        "occurrence). Small slips are forgiven: trailing whitespace, indentation (new_string is "
        "re-indented to the file's own, tabs stay tabs), curly quotes and dashes, missing or "
        "extra blank lines, escaped quotes or newlines. If nothing "
        "matches, the result shows the closest lines of the file and the first line that differs: "
        "fix old_string from that. The file's line endings (CRLF stays CRLF, and each line keeps "
        "its own in a mixed file), encoding and final newline are kept. An empty old_string creates a new file (or fills an empty one) with "
        "new_string. A file changed on disk since you read it must be read again first."
    )

    async def run(self, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve_writable(args.path)
        name = ctx.relative(path)
        old = args.old_string.replace("\r\n", "\n")
        new = args.new_string.replace("\r\n", "\n")
        if old == new:
            raise ToolError(
                "old_string and new_string are the same, so nothing would change; "
                "put the changed text in new_string"
            )
        if not path.exists():
            if old:
                raise ToolError(
                    f"{name} does not exist. To create it, call edit_file with an "
                    "empty old_string (or use write_file); check the path with find_files"
                )
            return await _write(ctx, path, None, new, "Created")
        check_fresh(ctx, path)
        current = load_text(ctx, path)
        if not old:
            if current.text.strip():
                raise ToolError(
                    f"old_string is empty but {name} is not; give the exact text to "
                    "replace, or use write_file to replace the whole file"
                )
            return await _write(ctx, path, current, conform(new, current.format), "Filled")
        try:
            edit = replace_text(current.text, old, new, args.replace_all)
        except MatchError as exc:
            raise ToolError(f"{name}: {exc}") from None
        new_text = conform(edit.text, current.format)
        if new_text == current.text:
            raise ToolError(
                f"the edit leaves {name} unchanged (old_string and new_string differ "
                "only in ways the match ignores); nothing was written"
            )
        note = render("edit_stage_note", stage=edit.stage.name)
        summary = f": replaced {_lines_label(edit.lines)}{f' {note}' if note else ''}"
        return await _write(ctx, path, current, new_text, "Edited", summary)


async def _write(
    ctx: ToolContext,
    path: Path,
    current: TextFile | None,
    new_text: str,
    verb: str,
    summary: str = "",
) -> ToolResult:
    """Write the new text (lint before and after), and report what changed."""
    name = ctx.relative(path)
    old_text = current.text if current else ""
    before = await lint_snapshot([path], ctx) if current else None
    if current:
        save_checked(ctx, path, new_text, current.format, current.mode)
    else:
        save_checked(ctx, path, new_text, TextFormat(), None)
    ctx.note_written(path)
    output = f"{verb} {name}{summary}."
    view = changed_view(old_text, new_text)
    if view:
        output += "\n" + view
    output += await lint_introduced(before, [path], ctx)
    diff = unified_diff(old_text, new_text, name if current else None, name)
    return ToolResult(output=output, diff=diff)
