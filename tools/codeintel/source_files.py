"""Which source files a code map covers: git's view of the tree when there is one, else a pruned walk."""

from __future__ import annotations

import functools
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from keel.tools.codeintel.languages import language_for
from keel.tools.codeintel.tags import supports
from keel.tools.exec.git_safety import git_environment, hardened_args, in_nested_repository

MAX_FILE_BYTES = 1_000_000
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        "build",
        "dist",
        "target",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
    }
)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file a grammar reads, with the stamp its cached tags are keyed on."""

    path: str  # absolute
    rel: str  # relative to the workspace root, with forward slashes
    language: str
    mtime_ns: int
    size: int


@functools.cache
def _language_of_suffix(suffix: str) -> str | None:
    return language_for("file" + suffix)


def _git_listing(directory: Path) -> list[str] | None:
    """Tracked plus untracked-but-not-ignored files under `directory`, or None outside a git repo."""
    try:
        done = subprocess.run(
            [
                "git",
                *hardened_args(
                    ["-C", str(directory), "ls-files", "-z", "-co", "--exclude-standard"]
                ),
            ],
            env=git_environment(os.environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return [name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


def _walk_listing(directory: Path) -> list[str]:
    names: list[str] = []
    for current, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
        prefix = os.path.relpath(current, directory)
        for name in files:
            names.append(name if prefix == "." else f"{prefix}/{name}".replace(os.sep, "/"))
    return names


def discover(directory: Path, root: Path) -> list[SourceFile]:
    """Source files under `directory` that a grammar reads and that are not too big, sorted by path."""
    nested = in_nested_repository(directory, root)  # its config is the repository's to choose
    listing = None if nested else _git_listing(directory)
    if listing is None:
        listing = _walk_listing(directory)
    base = directory.relative_to(root).as_posix() if directory != root else ""
    real_root = os.path.realpath(root)
    found: list[SourceFile] = []
    for name in listing:
        language = _language_of_suffix(os.path.splitext(name)[1].lower())
        if not supports(language):
            continue
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                if not _links_inside(path, real_root):
                    continue  # a link to a file of the machine's: its definitions are not the project's
                info = os.stat(path)
        except OSError:  # listed by git but deleted, or a dangling link
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            continue
        rel = f"{base}/{name}" if base else name
        found.append(SourceFile(path, rel, language or "", info.st_mtime_ns, info.st_size))
    found.sort(key=lambda source: source.rel)
    return found


def _links_inside(path: str, real_root: str) -> bool:
    """Whether a link, followed, stays inside the repository (the tools refuse any path that does not)."""
    return os.path.commonpath([real_root, os.path.realpath(path)]) == real_root
