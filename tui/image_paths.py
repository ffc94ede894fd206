"""Image paths in a prompt: a PNG/JPEG/GIF/WebP file named in the text (typed, or pasted by a terminal as a
quoted or escaped path or a file:// URL) is sent with the prompt as an image (pure, no core import)."""

from __future__ import annotations

import shlex
from pathlib import Path
from urllib.parse import unquote, urlsplit

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


def _words(text: str) -> list[str]:
    """The prompt's words as a shell reads them (quotes and backslash escapes), else split on spaces."""
    try:
        return shlex.split(text)
    except ValueError:  # an apostrophe in the prose leaves a quote open
        return text.split()


def image_paths(text: str, cwd: Path) -> list[str]:
    """The existing image files the prompt names, in order, once each (relative paths are from `cwd`)."""
    found: list[str] = []
    for word in _words(text):
        word = word.strip("\"'()[]<>,;").rstrip(".?!:")
        if word.startswith("file://"):
            word = unquote(urlsplit(word).path)
        if not word.lower().endswith(IMAGE_SUFFIXES):
            continue
        path = Path(word).expanduser()
        path = path if path.is_absolute() else cwd / path
        if path.is_file() and str(path) not in found:
            found.append(str(path))
    return found
