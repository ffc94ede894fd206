"""Text files read, then written back atomically as they were: encoding, line endings, mode."""

from __future__ import annotations

import difflib
import errno
import glob
import os
import secrets
import stat
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path

from keel.tools.base import ToolError

SNIFF_BYTES = 8192

_BOMS: list[tuple[bytes, str]] = [
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
]


class NotTextError(Exception):
    """The bytes are not text (NUL bytes, or undecodable and full of control characters)."""


@dataclass(frozen=True)
class LineEndings:
    """A mixed-endings file's lines ("\\n" form, without endings) and each one's ending ("" last)."""

    lines: tuple[str, ...]
    endings: tuple[str, ...]


@dataclass(frozen=True)
class TextFormat:
    """How a text file is stored, so that writing it back changes only what was meant to change.

    `final_newline` is None for an empty file, which has no convention to keep; `mixed` holds the
    original lines of a file whose line endings differ, so that untouched lines keep their own.
    """

    codec: str = "utf-8"
    bom: bytes = b""
    newline: str = "\n"
    final_newline: bool | None = True
    mixed: LineEndings | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        """The encoding as a person would name it (for messages)."""
        name = {"utf-8": "UTF-8", "latin-1": "Latin-1"}.get(self.codec, self.codec.upper())
        return f"{name} with BOM" if self.bom and self.codec == "utf-8" else name


@dataclass
class TextFile:
    """A text file's content with "\\n" line endings, how it is stored, and its permission bits."""

    text: str
    format: TextFormat
    mode: int | None = None


def _looks_like_text(data: bytes) -> bool:
    """For non-UTF-8 bytes: legacy text has few control characters besides whitespace."""
    sample = data[:SNIFF_BYTES]
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    return controls <= len(sample) // 100


def decode_bytes(data: bytes) -> tuple[str, TextFormat]:
    """The text in `data` (line endings untouched) and its codec/BOM; NotTextError if binary."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(codec), TextFormat(codec=codec, bom=bom)
            except UnicodeDecodeError:
                raise NotTextError(
                    f"it starts with a {codec} byte-order mark but does not decode"
                ) from None
    if b"\x00" in data[:SNIFF_BYTES]:
        raise NotTextError("it contains NUL bytes")
    try:
        return data.decode("utf-8"), TextFormat()
    except UnicodeDecodeError:
        if not _looks_like_text(data):
            raise NotTextError("it is not valid UTF-8 and is full of control characters") from None
        return data.decode("latin-1"), TextFormat(codec="latin-1")


def _line_endings(raw: str) -> LineEndings:
    """Each line of the text and its own ending ("\\r\\n" if a "\\r" precedes the "\\n")."""
    pieces = raw.split("\n")
    lines = [piece.removesuffix("\r") for piece in pieces[:-1]] + pieces[-1:]
    endings = ["\r\n" if piece.endswith("\r") else "\n" for piece in pieces[:-1]] + [""]
    return LineEndings(tuple(lines), tuple(endings))


def split_line_endings(raw: str) -> tuple[str, TextFormat]:
    """The text with "\\n" line endings, and a format saying which endings it had.

    Only "\\n" ends a line, so `foo\\r\\r\\n` is the line `foo\\r` with a "\\r\\n" ending.
    """
    crlf = raw.count("\r\n")
    lf = raw.count("\n") - crlf
    fmt = TextFormat(
        newline="\r\n" if crlf > lf else "\n",
        final_newline=raw.endswith("\n") if raw else None,
        mixed=_line_endings(raw) if crlf and lf else None,
    )
    return (raw.replace("\r\n", "\n") if crlf else raw), fmt


def read_text(path: Path) -> TextFile:
    """Read a text file, remembering how it is stored; NotTextError for binary files."""
    data = path.read_bytes()
    raw, encoding = decode_bytes(data)
    text, endings = split_line_endings(raw)
    fmt = replace(endings, codec=encoding.codec, bom=encoding.bom)
    return TextFile(text, fmt, stat.S_IMODE(path.stat().st_mode))


def conform(text: str, fmt: TextFormat) -> str:
    """New "\\n"-form text with the final newline the file had (or lacked); as given if it was empty.

    A "\\r" at a line's end is the file's own (see split_line_endings): the caller turns the
    model's "\\r\\n" into "\\n" before this.
    """
    if not text or fmt.final_newline is None:
        return text
    if fmt.final_newline and not text.endswith("\n"):
        return text + "\n"
    if not fmt.final_newline and text.endswith("\n"):
        return text[:-1]
    return text


def encode_text(text: str, fmt: TextFormat, sources: Sequence[int | None] | None = None) -> bytes:
    """Bytes storing "\\n"-form text in the file's format; ToolError if its codec can't hold it.

    sources (see restore_endings) say which old line each line takes its ending from, when known.
    """
    if fmt.mixed is not None:
        text = restore_endings(text, fmt.mixed, fmt.newline, sources)
    elif fmt.newline != "\n":
        text = text.replace("\n", fmt.newline)
    try:
        return fmt.bom + text.encode(fmt.codec)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise ToolError(
            f"the file is stored as {fmt.label}, which cannot hold {bad!r}; "
            "write that character another way (an ASCII equivalent or an escape sequence)"
        ) from None


Opcode = tuple[str, int, int, int, int]


def _opcodes(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
    """difflib's opcodes from old to new lines, diffing only what lies between their common ends."""
    start, shortest = 0, min(len(old), len(new))
    while start < shortest and old[start] == new[start]:
        start += 1
    end = 0
    while end < shortest - start and old[-1 - end] == new[-1 - end]:
        end += 1
    middle = difflib.SequenceMatcher(
        None, old[start : len(old) - end], new[start : len(new) - end], autojunk=False
    )
    ops: list[Opcode] = [("equal", 0, start, 0, start)] if start else []
    ops += [
        (t, i1 + start, i2 + start, j1 + start, j2 + start)
        for t, i1, i2, j1, j2 in middle.get_opcodes()
    ]
    if end:
        ops.append(("equal", len(old) - end, len(old), len(new) - end, len(new)))
    return ops


def _new_endings(old: LineEndings, new: list[str], dominant: str) -> list[str]:
    """Each new line's ending: an unchanged line keeps its own, a changed one takes the ending of
    the old line at its place, an added one that of the line above; the last piece gets none."""
    endings = [dominant] * len(new)
    for tag, i1, i2, j1, j2 in _opcodes(old.lines, new):
        for j in range(j1, j2):
            if tag == "equal":
                endings[j] = old.endings[i1 + j - j1]
            elif tag == "replace":
                endings[j] = old.endings[min(i1 + j - j1, i2 - 1)]
            elif i1 > 0:
                endings[j] = old.endings[i1 - 1]
    return [ending or dominant for ending in endings[:-1]] + [""]


def restore_endings(
    text: str, old: LineEndings, dominant: str, sources: Sequence[int | None] | None = None
) -> str:
    """Put a mixed-endings file's line endings back into "\\n"-form text, line by line: each line
    takes the ending of the old line sources names for it (None: dominant) when the caller knows
    (a diff cannot tell which of two equal lines was kept), else as _new_endings finds them."""
    new = text.split("\n")
    if sources is not None and len(sources) >= len(new) - 1:
        endings = [
            (old.endings[s] if s is not None and 0 <= s < len(old.endings) else "") or dominant
            for s in sources[: len(new) - 1]
        ] + [""]
    else:
        endings = _new_endings(old, new, dominant)
    return "".join(line + ending for line, ending in zip(new, endings))


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


TEMP_SUFFIX = (
    ".keel-tmp"  # marks the temp files of write_atomic, so a crash's leftovers can be found
)


def _open_beneath(root: Path, directory: Path, *, create: bool) -> int:
    """A descriptor of `directory` (inside `root`), reached one folder at a time from `root`
    without following a symbolic link, so a folder swapped for a link mid-write cannot send the
    write elsewhere; missing folders are made (mkdirat) when `create`."""
    try:
        parts = directory.relative_to(root).parts
    except ValueError:
        raise PermissionError(errno.EACCES, f"{directory} is outside the workspace") from None
    if ".." in parts:
        raise PermissionError(errno.EACCES, f"{directory} leaves the workspace")
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    fd = os.open(root, flags)
    try:
        for part in parts:
            if create:
                with suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
            try:
                child = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise OSError(exc.errno, "a folder on its path is a symbolic link") from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_atomic(
    path: Path, data: bytes, mode: int | None = None, root: Path | None = None
) -> None:
    """Replace `path` with `data` in one step (temp file in the same directory, fsync, rename).

    Every folder from `root` (default: the file's own folder) down is opened without following
    symbolic links, and the temp file is made and renamed relative to that folder's descriptor.
    `mode` is the permission bits to keep (setuid, setgid and sticky bits are dropped); a new file
    gets the usual ones (0o666 less the umask). Missing parent directories are created.
    """
    mode = (0o666 & ~_umask()) if mode is None else mode & 0o777
    dir_fd = _open_beneath(root or path.parent, path.parent, create=True)
    try:
        temp_name = _write_temp(dir_fd, path.name, data, mode)
        try:
            os.rename(temp_name, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with suppress(FileNotFoundError):
                os.unlink(temp_name, dir_fd=dir_fd)
            raise
        with suppress(OSError):
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _write_temp(dir_fd: int, name: str, data: bytes, mode: int) -> str:
    """A new temp file beside `name` in the folder `dir_fd`, holding `data` with `mode`; its name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        temp_name = f".{name}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            fd = os.open(temp_name, flags, 0o600, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary file name")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temp_name, dir_fd=dir_fd)
        raise
    return temp_name


def remove_beneath(path: Path, root: Path) -> None:
    """Delete the file `path` (inside `root`), its folders opened without following links."""
    dir_fd = _open_beneath(root, path.parent, create=False)
    try:
        os.unlink(path.name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def save_text(
    path: Path, text: str, fmt: TextFormat, mode: int | None = None, root: Path | None = None
) -> None:
    """Write "\\n"-form text atomically in the given format (final newline: the caller's choice)."""
    write_atomic(path, encode_text(text, fmt), mode, root)


def remove_leftover_temp_files(path: Path) -> list[Path]:
    """Delete the temp files a killed write_atomic of `path` left beside it; return what was deleted."""
    removed = []
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*{TEMP_SUFFIX}"):
        with suppress(OSError):
            leftover.unlink()
            removed.append(leftover)
    return removed
