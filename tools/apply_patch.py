"""apply_patch: a multi-file patch, all or nothing: every change is computed before any write."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.editing.edit_support import (
    check_fresh,
    lint_introduced,
    lint_snapshot,
    load_text,
    refuse_read_only,
    unified_diff,
)
from keel.tools.editing.fileio import (
    NotTextError,
    TextFormat,
    conform,
    encode_text,
    read_text,
    remove_beneath,
    write_atomic,
)
from keel.tools.editing.patch_format import (
    AddFile,
    DeleteFile,
    FileOp,
    PatchError,
    UpdateFile,
    apply_hunks,
    parse_patch,
)


class ApplyPatchArgs(ToolArgs):
    patch: str = Field(description="The whole patch, from '*** Begin Patch' to '*** End Patch'.")


@dataclass
class Change:
    """One file's planned change: its new text and bytes (None to delete) and what it replaces."""

    letter: str  # A, M, D or R, as in git's name-status
    path: Path
    old_text: str | None
    new_text: str | None = None
    fmt: TextFormat = field(default_factory=TextFormat)
    mode: int | None = None
    moved_from: Path | None = None
    note: str = ""
    sources: list[int | None] | None = None  # which old line's ending each new line takes
    data: bytes | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        # encoded now, so that a character the file's encoding can't hold stops the patch early
        self.data = (
            None if self.new_text is None else encode_text(self.new_text, self.fmt, self.sources)
        )


class ApplyPatchTool(Tool[ApplyPatchArgs]):
    name = "apply_patch"
    kind = ToolKind.EDIT
    Args = ApplyPatchArgs
    description = (
        "Change one or more files with a patch, all or nothing: if any hunk does not apply, no "
        "file changes and the result names the failing hunk and shows the closest lines. "
        "Example:\n"
        "*** Begin Patch\n"
        "*** Add File: path/to/EXAMPLE_ONLY_new.py\n"
        "+first line of the new file\n"
        "+second line\n"
        "*** Delete File: path/to/EXAMPLE_ONLY_old.py\n"
        "*** Update File: path/to/EXAMPLE_ONLY_app.py\n"
        "*** Move to: path/to/EXAMPLE_ONLY_main.py\n"
        "@@ def handle(request):\n"
        "     if request.ok:\n"
        "-        return None\n"
        "+        return respond(request)\n"
        "     log(request)\n"
        "*** End Patch\n"
        "Sections: Add File (every line prefixed +), Delete File, Update File (optionally "
        "followed by Move to, which renames it). In an update each hunk starts with @@, "
        "optionally followed by a line that appears above the change, to locate it; then lines "
        "prefixed ' ' (unchanged context), '-' (removed) or '+' (added). Give about 3 context "
        "lines above and below each change, copied exactly, without line numbers. Several "
        "changes in one file: several @@ hunks, in file order. '*** End of File' after a hunk "
        "pins it to the end of the file. Differences in trailing whitespace, indentation and "
        "curly quotes are forgiven, as in edit_file. The example's paths are placeholders: "
        "use the project's own."
    )

    async def run(self, args: ApplyPatchArgs, ctx: ToolContext) -> ToolResult:
        try:
            ops = parse_patch(args.patch)
        except PatchError as exc:
            raise ToolError(f"the patch could not be read: {exc}") from None
        try:
            changes = _plan(ops, ctx)
        except PatchError as exc:
            raise ToolError(
                f"the patch does not apply, so nothing was changed (fix it and send "
                f"the whole patch again).\n{exc}"
            ) from None
        updated = [c for c in changes if c.letter in "MR"]
        before = await lint_snapshot([c.moved_from or c.path for c in updated], ctx)
        _execute(changes, ctx)
        lines = ["Applied the patch:"]
        diffs = []
        for change in changes:
            name = ctx.relative(change.path)
            shown = f"{ctx.relative(change.moved_from)} -> {name}" if change.moved_from else name
            lines.append(f"  {change.letter} {shown}{change.note}")
            old_name = ctx.relative(change.moved_from or change.path)
            diffs.append(
                unified_diff(
                    change.old_text or "",
                    change.new_text or "",
                    old_name if change.old_text is not None else None,
                    name if change.new_text is not None else None,
                )
            )
        renames = {
            ctx.relative(c.moved_from): ctx.relative(c.path) for c in updated if c.moved_from
        }
        lint = await lint_introduced(before, [c.path for c in updated], ctx, renames)
        output = "\n".join(lines) + lint
        return ToolResult(output=output, diff="".join(diffs))


def _claim(claimed: set[Path], path: Path, ctx: ToolContext) -> None:
    if path in claimed:
        raise PatchError(
            f"{ctx.relative(path)} appears more than once in the patch; put all of its "
            "changes in one section"
        )
    claimed.add(path)


def _plan(ops: list[FileOp], ctx: ToolContext) -> list[Change]:
    """Every file's new content, computed without touching the disk; PatchError at a problem."""
    changes: list[Change] = []
    claimed: set[Path] = set()
    for op in ops:
        path = ctx.resolve_writable(op.path)
        name = ctx.relative(path)
        _claim(claimed, path, ctx)
        if isinstance(op, AddFile):
            if path.exists():
                raise PatchError(
                    f"'*** Add File: {op.path}': {name} already exists; change it with "
                    "'*** Update File:' (or delete it first)"
                )
            changes.append(Change("A", path, None, op.content))
            continue
        if not path.is_file():
            what = "is a directory" if path.is_dir() else "does not exist"
            raise PatchError(f"{name} {what}; check the path (find_files)")
        check_fresh(ctx, path)
        refuse_read_only(ctx, path)
        if isinstance(op, DeleteFile):
            try:
                old_text = read_text(path).text
            except NotTextError:
                old_text = ""
            changes.append(Change("D", path, old_text))
            continue
        changes.append(_plan_update(op, path, ctx, claimed))
    return changes


def _plan_update(op: UpdateFile, path: Path, ctx: ToolContext, claimed: set[Path]) -> Change:
    current = load_text(ctx, path)
    applied = apply_hunks(current.text, op.hunks, op.path)
    note = ""
    if applied.stages:
        kinds = sorted({stage.value for stage in applied.stages})
        note = f" (some hunks matched with {', '.join(kinds)}; check the result)"
    new_text = conform(applied.text, current.format)
    change = Change(
        "M",
        path,
        current.text,
        new_text,
        current.format,
        current.mode,
        note=note,
        sources=applied.sources,
    )
    if op.move_to:
        target = ctx.resolve_writable(op.move_to)
        if target != path:
            _claim(claimed, target, ctx)
            if target.exists():
                raise PatchError(
                    f"'*** Move to: {op.move_to}': {ctx.relative(target)} already exists"
                )
            change.letter, change.moved_from, change.path = "R", path, target
    return change


def _execute(changes: list[Change], ctx: ToolContext) -> None:
    """Write every change; if the disk fails midway, put back what was already changed."""
    originals: dict[Path, tuple[bytes, int] | None] = {}
    for change in changes:
        for path in filter(None, (change.path, change.moved_from)):
            originals[path] = (path.read_bytes(), path.stat().st_mode) if path.exists() else None
    try:
        for change in changes:
            if change.data is None:
                remove_beneath(change.path, ctx.root)
            else:
                write_atomic(change.path, change.data, change.mode, ctx.root)
            if change.moved_from:
                remove_beneath(change.moved_from, ctx.root)
    except OSError as exc:
        _restore(originals, ctx.root)
        raise ToolError(
            f"writing the patch failed ({exc}); every file was put back as it was"
        ) from None
    for path in originals:
        ctx.note_written(path)


def _restore(originals: dict[Path, tuple[bytes, int] | None], root: Path) -> None:
    for path, original in originals.items():
        try:
            if original is None:
                if path.exists():
                    remove_beneath(path, root)
            else:
                data, mode = original
                write_atomic(path, data, mode, root)
        except OSError:
            continue
