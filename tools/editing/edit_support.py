"""What the editing tools share: loading, the stale-file check, diffs, lint around writes."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING

from keel.prompts import plural
from keel.tools.base import FileStamp, ToolContext, ToolError
from keel.tools.editing.closest import numbered
from keel.tools.editing.fileio import NotTextError, TextFile, TextFormat, read_text, save_text
from keel.tools.editing.line_keys import split_lines

if TYPE_CHECKING:
    from keel.tools.linting.linters import Diagnostic

MAX_DIFF_LINES = 400
MAX_VIEW_LINES = 40
MAX_LINT_SHOWN = 20


def check_fresh(ctx: ToolContext, path: Path) -> None:
    """Refuse to change a file that changed on disk since the agent last read or wrote it."""
    stamp = ctx.read_stamps.get(path)
    if stamp is None:
        return
    name = ctx.relative(path)
    if not path.exists():
        raise ToolError(
            f"{name} was deleted since you last read it; check with read_file or "
            "find_files before changing it"
        )
    if FileStamp.of(path) != stamp:
        raise ToolError(
            f"{name} changed on disk since you last read or wrote it (a command or "
            "someone else modified it); read it again with read_file, then redo "
            "the change against its current content"
        )


def load_text(ctx: ToolContext, path: Path) -> TextFile:
    """An existing text file, or a ToolError saying why it can't be edited."""
    name = ctx.relative(path)
    if path.is_dir():
        raise ToolError(f"{name} is a directory, not a file")
    if not path.exists():
        raise ToolError(
            f"{name} does not exist; create it with write_file (or check the path with find_files)"
        )
    if not path.is_file():
        raise ToolError(f"{name} is not a regular file (a device, socket or pipe)")
    try:
        return read_text(path)
    except NotTextError as exc:
        raise ToolError(
            f"{name} is not a text file ({exc}); the edit tools change text files "
            "only (use run_command for binary files)"
        ) from None
    except PermissionError:
        raise ToolError(f"{name} can't be read (permission denied)") from None


def refuse_read_only(ctx: ToolContext, path: Path) -> None:
    """Files nobody may write (no write bit at all) are left alone, even when running as root."""
    if path.exists() and not path.stat().st_mode & 0o222:
        raise ToolError(
            f"{ctx.relative(path)} is read-only, so it was left unchanged (change its "
            "mode with run_command first if it really should be edited)"
        )


def save_checked(
    ctx: ToolContext, path: Path, text: str, fmt: TextFormat, mode: int | None
) -> None:
    """save_text, refusing read-only files and turning disk errors into messages for the model."""
    name = ctx.relative(path)
    refuse_read_only(ctx, path)
    try:
        save_text(path, text, fmt, mode, ctx.root)
    except OSError as exc:
        raise ToolError(f"could not write {name}: {exc.strerror or exc}") from None


def _with_newline_markers(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if line.endswith("\n") or line.startswith(("---", "+++", "@@")):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return out


def unified_diff(old_text: str, new_text: str, old_name: str | None, new_name: str | None) -> str:
    """A unified diff (git style names; None for a side that doesn't exist), cut when very long."""
    diff = difflib.unified_diff(
        old_text.splitlines(keepends=True) if old_text else [],
        new_text.splitlines(keepends=True) if new_text else [],
        f"a/{old_name}" if old_name else "/dev/null",
        f"b/{new_name}" if new_name else "/dev/null",
    )
    lines = _with_newline_markers(list(diff))
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [
            f"... ({plural(len(lines) - MAX_DIFF_LINES, 'more diff line')})\n"
        ]
    return "".join(lines)


def changed_view(old_text: str, new_text: str, context: int = 2) -> str:
    """The changed lines of the new text with some context, numbered as read_file numbers them."""
    old_lines, new_lines = split_lines(old_text), split_lines(new_text)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    spans: list[list[int]] = []
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = max(0, j1 - context), min(len(new_lines), max(j2, j1) + context)
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    parts, shown = [], 0
    for start, end in spans:
        if shown >= MAX_VIEW_LINES:
            parts.append("   ...")
            break
        end = min(end, start + MAX_VIEW_LINES - shown)
        parts.append(numbered(new_lines[start:end], start + 1))
        shown += end - start
    return "\n   ...\n".join(parts)


async def lint_snapshot(paths: list[Path], ctx: ToolContext) -> list[Diagnostic] | None:
    """The lint diagnostics of files as they are now (linters in the session's jail); None when
    linting is unavailable or fails."""
    existing = [path for path in paths if path.is_file()]
    try:
        from keel.tools.linting import linters
        from keel.tools.linting.linter_process import LinterJail
    except ImportError:
        return None
    try:
        return await linters.check_paths(existing, LinterJail.of(ctx)) if existing else []
    except Exception:  # noqa: BLE001 - a broken linter must not break an edit
        return None


async def lint_introduced(
    before: list[Diagnostic] | None,
    paths: list[Path],
    ctx: ToolContext,
    renames: dict[str, str] | None = None,
) -> str:
    """A note listing the lint problems the edit introduced, or "" when none (or no linting).

    `renames` maps old to new workspace-relative paths of moved files, so their old problems count.
    """
    if before is None:
        return ""
    if renames:
        before = [
            d.model_copy(update={"path": renames[d.path]}) if d.path in renames else d
            for d in before
        ]
    after = await lint_snapshot(paths, ctx)
    if after is None:
        return ""
    from keel.tools.linting import linters

    problems = linters.introduced(before, after)
    if not problems:
        return ""
    plural = "s" if len(problems) != 1 else ""
    shown = [str(problem) for problem in problems[:MAX_LINT_SHOWN]]
    if len(problems) > MAX_LINT_SHOWN:
        shown.append(f"... and {len(problems) - MAX_LINT_SHOWN} more")
    return f"\n\nThe edit introduced {len(problems)} lint problem{plural}:\n" + "\n".join(shown)
