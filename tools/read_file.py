"""read_file: a text file as numbered lines (a range of it when long), or a directory's entries."""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path

from pydantic import Field

from keel.prompts import render
from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.editing.fileio import SNIFF_BYTES, NotTextError, decode_bytes
from keel.tools.images.image_file import ImageError, load_image, media_type_of

MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 100_000
HUGE_FILE_BYTES = 5_000_000
MAX_DIR_ENTRIES = 1000


class ReadFileArgs(ToolArgs):
    path: str = Field(
        description="The file (or directory) to read, relative to the workspace root."
    )
    offset: int = Field(1, ge=0, description="The line number to start at (1-based).")
    limit: int = Field(2000, ge=1, description="The most lines to return.")


def _size_label(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size:,} bytes"


def _missing(ctx: ToolContext, path: Path) -> ToolError:
    parent = path.parent
    if not parent.is_dir():
        return ToolError(
            f"{ctx.relative(path)} does not exist (nor does its directory "
            f"{ctx.relative(parent)}/); use find_files to locate the file"
        )
    close = difflib.get_close_matches(path.name, os.listdir(parent), n=3, cutoff=0.6)
    hint = (
        f" Did you mean: {', '.join(ctx.relative(parent / name) for name in close)}?"
        if close
        else ""
    )
    return ToolError(
        f"{ctx.relative(path)} does not exist.{hint} Use find_files to search by name."
    )


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a symlink loop, or an entry that vanished
        return False


def list_directory(ctx: ToolContext, path: Path) -> str:
    """A directory's entries, sorted, directories marked with a trailing /."""
    with os.scandir(path) as scan:
        entries = sorted((entry.name + ("/" if _is_dir(entry) else "")) for entry in scan)
    name = ctx.relative(path)
    if not entries:
        return f"{name}/ is an empty directory."
    shown = entries[:MAX_DIR_ENTRIES]
    header = f"{name}/ ({len(entries)} entries; directories end with /):"
    footer = (
        f"\n... {len(entries) - MAX_DIR_ENTRIES} more entries; use find_files with a pattern "
        "to narrow down"
        if len(entries) > MAX_DIR_ENTRIES
        else ""
    )
    return header + "\n" + "\n".join(shown) + footer


def _cut_long(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return (
        line[:MAX_LINE_CHARS] + f" [... line cut: {len(line) - MAX_LINE_CHARS:,} more characters]"
    )


def _stream_lines(path: Path) -> list[str]:
    """A huge file's lines, decoded one by one (asked for only with an explicit range)."""
    with path.open("rb") as handle:
        if b"\x00" in handle.read(SNIFF_BYTES):
            raise NotTextError("it contains NUL bytes")
        handle.seek(0)
        lines = [raw.decode("utf-8", errors="replace").rstrip("\r\n") for raw in handle]
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    return lines


def _decoded_lines(data: bytes) -> tuple[list[str], str]:
    raw, fmt = decode_bytes(data)
    lines = raw.split("\n")
    if lines[-1] == "":
        lines.pop()
    note = f" (decoded as {fmt.label}: the file is not UTF-8)" if fmt.codec == "latin-1" else ""
    return [line.removesuffix("\r") for line in lines], note


def render_lines(lines: list[str], offset: int, limit: int) -> str:
    """`cat -n` style lines from offset (1-based), at most limit, with a footer when cut."""
    total = len(lines)
    first = max(offset, 1)
    end = min(total, first + limit - 1)
    shown = lines[first - 1 : end]
    if shown and max(map(len, shown)) > MAX_LINE_CHARS:
        shown = [_cut_long(line) for line in shown]
    numbered = [f"{number:6}\t{line}" for number, line in enumerate(shown, first)]
    last = end
    if (
        sum(map(len, numbered)) + len(numbered) > MAX_OUTPUT_CHARS
    ):  # rare: keep whole lines up to the cap
        size, kept = 0, 0
        for entry in numbered:
            if kept and size + len(entry) > MAX_OUTPUT_CHARS:
                break
            size += len(entry) + 1
            kept += 1
        numbered, last = numbered[:kept], first + kept - 1
    text = "\n".join(numbered)
    if first > 1 or last < total:
        why = " (output size limit)" if last < end else ""
        more = f" To read more, call read_file with offset={last + 1}." if last < total else ""
        text += f"\n\n(Showing lines {first}-{last} of {total}{why}.{more})"
    return text


def _image_type(path: Path) -> str | None:
    """The file's image type by its first bytes (PNG, JPEG, GIF, WebP), None for any other file."""
    try:
        with path.open("rb") as handle:
            return media_type_of(handle.read(16))
    except OSError:
        return None


def _read_image(ctx: ToolContext, path: Path, media_type: str) -> ToolResult:
    """An image: given to a model that takes images (after the step's results), a clear no to others."""
    name = ctx.relative(path)
    if not ctx.takes_images:
        raise ToolError(render("image_not_readable", name=name, media_type=media_type))
    try:
        image = load_image(path, name)
    except ImageError as exc:
        raise ToolError(str(exc)) from None
    ctx.note_read(path)
    return ToolResult(output=render("image_read", image=image), image=image)


class ReadFileTool(Tool[ReadFileArgs]):
    name = "read_file"
    kind = ToolKind.READ
    Args = ReadFileArgs
    description = (
        "Read a text file as numbered lines (`cat -n` style: line number, tab, text): `limit` "
        "lines from line `offset` (1-based). When the file has more, the output ends by saying "
        "how to read the next part. Lines over 2000 characters are cut. A directory path lists "
        "its entries (directories end with /). In large files, find the place with search "
        "first, then read that range. The number and tab before each line are not part of the "
        "file: leave them out of old_string and patches. Binary files are refused."
    )

    async def run(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(args.path)
        name = ctx.relative(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise _missing(ctx, path) from None
        if stat.S_ISDIR(st.st_mode):
            return ToolResult(output=list_directory(ctx, path))
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(f"{name} is not a regular file (a device, socket or pipe); not read")
        size = st.st_size
        try:  # a file of a readable size is read once: sniffed, then decoded
            data = path.read_bytes() if size <= HUGE_FILE_BYTES else None
        except PermissionError:
            raise ToolError(f"{name} can't be read (permission denied)") from None
        image_type = _image_type(path) if data is None else media_type_of(data[:16])
        if image_type:
            return _read_image(ctx, path, image_type)
        ranged = bool({"offset", "limit"} & args.model_fields_set)
        if size > HUGE_FILE_BYTES and not ranged:
            raise ToolError(
                f"{name} is {_size_label(size)}, too large to read whole. Read a part with "
                "offset and limit (for example offset=1, limit=200), or use search to find the "
                "lines you need."
            )
        try:
            if data is None:
                lines, note = _stream_lines(path), ""
            else:
                lines, note = _decoded_lines(data)
        except NotTextError as exc:
            raise ToolError(
                f"{name} is a binary file ({exc}; {_size_label(size)}) and can't be shown as "
                f"text. To inspect it, use run_command (e.g. `file {name}`, `xxd {name} | head`)."
            ) from None
        except PermissionError:
            raise ToolError(f"{name} can't be read (permission denied)") from None
        ctx.note_read(path, st)
        if not lines:
            return ToolResult(output=f"{name} is empty (0 lines).")
        if args.offset > len(lines):
            raise ToolError(
                f"offset {args.offset} is past the end of {name}, which has "
                f"{len(lines)} lines; use an offset from 1 to {len(lines)}"
            )
        output = render_lines(lines, args.offset, args.limit)
        return ToolResult(output=f"{name}{note}:\n{output}" if note else output)
