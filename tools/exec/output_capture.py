"""Bounded capture of a command's output: a head and a tail in memory, the rest streamed to a capped file.

A command may print gigabytes; the model sees at most about 10 KiB of it, cleaned of terminal noise
(ANSI escapes, carriage-return progress redraws), and is told where the full output was saved.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import BinaryIO

from keel.prompts import plural

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 64 * 1024
FILE_CAP_BYTES = 32 * 1024 * 1024
SHOWN_HEAD_CHARS = 3 * 1024
SHOWN_TAIL_CHARS = 6 * 1024 + 512

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erase
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: window titles, hyperlinks
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS, SOS, PM, APC strings
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
    r"|\x1b[()][0-9A-Za-z]"  # charset selection
)
_OVERSTRIKE = re.compile(r".\x08")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_terminal_text(text: str) -> str:
    """Text as a person would last have seen it on a terminal: no escapes, each line in its final state."""
    text = _ANSI.sub("", text)
    while "\x08" in text:
        stripped = _OVERSTRIKE.sub("", text, count=0)
        if stripped == text:
            break
        text = stripped
    lines = []
    for line in text.split("\n"):
        if "\r" in line:
            line = line.rstrip("\r")
            line = line.rsplit("\r", 1)[-1]
        lines.append(line)
    return _CONTROL.sub("", "\n".join(lines))


def decode_output(data: bytes, *, starts_mid_stream: bool = False) -> str:
    """Bytes as text; a slice taken mid-stream drops the partial UTF-8 character it may start with."""
    if starts_mid_stream:
        skip = 0
        while skip < min(3, len(data)) and (data[skip] & 0xC0) == 0x80:
            skip += 1
        data = data[skip:]
    return data.decode("utf-8", errors="replace")


def _cut_head(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut + 1] if cut > limit // 2 else text[:limit]


def _cut_tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    start = len(text) - limit
    cut = text.find("\n", start)
    return text[cut + 1 :] if 0 <= cut < start + limit // 2 else text[start:]


def render_head_tail(
    head: bytes,
    tail: bytes | None,
    *,
    total_bytes: int,
    total_lines: int,
    saved_to: str | None = None,
) -> tuple[str, bool]:
    """The text the model sees, and whether anything was left out.

    `head` is the start of the output; `tail` its end when the two are not contiguous (None when
    `head` is all of it). `total_lines` counts newlines, which cleaning preserves, so the number of
    lines left out is exact.
    """
    head_text = clean_terminal_text(decode_output(head))
    if tail is None and len(head_text) <= SHOWN_HEAD_CHARS + SHOWN_TAIL_CHARS:
        return head_text, False
    if tail is None:
        shown_head = _cut_head(head_text, SHOWN_HEAD_CHARS)
        shown_tail = _cut_tail(head_text[len(shown_head) :], SHOWN_TAIL_CHARS)
    else:
        tail_text = clean_terminal_text(decode_output(tail, starts_mid_stream=True))
        newline = tail_text.find("\n")
        if 0 <= newline < len(tail_text) - 1:
            tail_text = tail_text[newline + 1 :]  # the first tail line is usually partial
        shown_head = _cut_head(head_text, SHOWN_HEAD_CHARS)
        shown_tail = _cut_tail(tail_text, SHOWN_TAIL_CHARS)
    omitted_lines = max(0, total_lines - shown_head.count("\n") - shown_tail.count("\n"))
    where = (
        f"; the full output is in {saved_to}: grep it or page it with sed -n" if saved_to else ""
    )
    marker = (
        f"[… {plural(omitted_lines, 'line')} omitted; {total_bytes:,} bytes and "
        f"{plural(total_lines, 'line')} of output in all{where} …]"
    )
    if shown_head and not shown_head.endswith("\n"):
        shown_head += "\n"
    if not shown_tail.startswith("\n"):
        marker += "\n"
    return f"{shown_head}{marker}{shown_tail}", True


class OutputCapture:
    """Keeps the first and last bytes of a stream in memory and writes the stream to a capped file."""

    def __init__(self, path: Path, *, file_cap: int = FILE_CAP_BYTES) -> None:
        self.path = path
        self.file_cap = file_cap
        self.total_bytes = 0
        self.total_lines = 0
        self.saved_bytes = 0
        self.last_output_at = time.monotonic()
        self._head = bytearray()
        self._tail = bytearray()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: BinaryIO | None = path.open("wb")

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the stream."""
        if not chunk:
            return
        self.last_output_at = time.monotonic()
        self.total_bytes += len(chunk)
        self.total_lines += chunk.count(b"\n")
        if len(self._head) < HEAD_BYTES:
            self._head += chunk[: HEAD_BYTES - len(self._head)]
        self._tail += chunk[-TAIL_BYTES:]
        if len(self._tail) > TAIL_BYTES:
            del self._tail[: len(self._tail) - TAIL_BYTES]
        if self._file is not None and self.saved_bytes < self.file_cap:
            piece = chunk[: self.file_cap - self.saved_bytes]
            self._file.write(piece)
            self.saved_bytes += len(piece)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    @property
    def silent_for(self) -> float:
        return time.monotonic() - self.last_output_at

    @property
    def complete_on_disk(self) -> bool:
        return self.saved_bytes == self.total_bytes

    def describe_saved(self) -> str:
        """Where the full output is, for the truncation marker."""
        if self.complete_on_disk:
            return str(self.path)
        return f"{self.path} (its first {self.saved_bytes:,} bytes)"

    def render(self) -> tuple[str, bool]:
        """All the output so far, as the model sees it, and whether some was left out."""
        self._flush()
        contiguous = self.total_bytes <= len(self._head) + len(self._tail)
        if contiguous:
            overlap = len(self._head) + len(self._tail) - self.total_bytes
            whole = bytes(self._head) + bytes(self._tail[overlap:])
            head, tail = whole, None
        else:
            head, tail = bytes(self._head), bytes(self._tail)
        return render_head_tail(
            head,
            tail,
            total_bytes=self.total_bytes,
            total_lines=self.total_lines,
            saved_to=self.describe_saved(),
        )

    def render_since(self, offset: int, lines_before: int) -> tuple[str, bool]:
        """The output after the first `offset` bytes (of which `lines_before` were lines), as shown to the model.

        Reads the saved file for what it holds and the in-memory tail for the rest, never more
        than a head and a tail's worth of bytes.
        """
        self._flush()
        size = self.total_bytes - offset
        if size <= 0:
            return "", False
        lines = self.total_lines - lines_before
        tail_start = max(offset, self.total_bytes - len(self._tail))
        on_disk_end = min(self.saved_bytes, self.total_bytes)
        if size <= HEAD_BYTES + TAIL_BYTES and offset + size <= on_disk_end:
            return render_head_tail(
                self._read(offset, size), None, total_bytes=size, total_lines=lines
            )
        head = self._read(
            offset, min(HEAD_BYTES, max(0, on_disk_end - offset), tail_start - offset)
        )
        tail = bytes(self._tail[tail_start - (self.total_bytes - len(self._tail)) :])
        if offset + len(head) == tail_start:
            return render_head_tail(head + tail, None, total_bytes=size, total_lines=lines)
        return render_head_tail(
            head, tail, total_bytes=size, total_lines=lines, saved_to=self.describe_saved()
        )

    def _flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def _read(self, offset: int, size: int) -> bytes:
        if size <= 0:
            return b""
        with self.path.open("rb") as saved:
            saved.seek(offset)
            return saved.read(size)
