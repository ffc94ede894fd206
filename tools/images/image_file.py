"""One image file read for a model: its type from its first bytes (PNG, JPEG, GIF, WebP), capped in size (a
session log line holds it, and providers refuse large images), as base64 with its hash."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

MAX_IMAGE_BYTES = 3_000_000  # its base64 (4 MB) still fits a session log line keel reads back
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


class ImageError(Exception):
    """The file cannot be given as an image; the message says why and what would work."""


@dataclass(frozen=True)
class ImageData:
    """An image ready for a chat message: its media type, base64 bytes, size and sha256."""

    name: str
    media_type: str
    data: str
    size: int
    sha256: str

    @property
    def label(self) -> str:
        """ "PNG, 12.3 KB": what a person and the model are told about it."""
        kind = self.media_type.split("/")[1].upper()
        return f"{kind}, {size_label(self.size)}"


def size_label(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} KB"


def media_type_of(head: bytes) -> str | None:
    """The image type the first bytes say, or None for anything else."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def looks_like_image(path: Path) -> bool:
    """Whether a path names an image by its suffix (what the prompt box and read_file first look at)."""
    return path.suffix.lower() in IMAGE_SUFFIXES


def load_image(path: Path, name: str | None = None) -> ImageData:
    """The image at `path` (`name` is how it is shown); ImageError when it is missing, not an image or too large."""
    shown = name or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            raise ImageError(
                f"{shown} is {size_label(size)}, over the {size_label(MAX_IMAGE_BYTES)} an image may be; "
                "send a smaller one (scale it down or crop it, e.g. `convert IN -resize 50% OUT`)"
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ImageError(f"{shown} does not exist; give the path of an image file") from None
    except IsADirectoryError:
        raise ImageError(f"{shown} is a directory, not an image") from None
    except OSError as exc:
        raise ImageError(f"{shown} cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_IMAGE_BYTES:  # it grew since its size was read
        raise ImageError(f"{shown} is over the {size_label(MAX_IMAGE_BYTES)} an image may be")
    media_type = media_type_of(raw[:16])
    if media_type is None:
        raise ImageError(f"{shown} is not a PNG, JPEG, GIF or WebP image (by its content)")
    return ImageData(
        name=shown,
        media_type=media_type,
        data=base64.b64encode(raw).decode("ascii"),
        size=len(raw),
        sha256=hashlib.sha256(raw).hexdigest(),
    )
