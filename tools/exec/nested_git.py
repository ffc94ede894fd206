"""The `.git` entries nested in a workspace (submodules, vendored repositories) that commands must not change.

A command that rewrites `sub/.git/config`, or a submodule's `.git` file, plants a program for the
next `git status` in the outer repository (git runs `git status` inside each submodule, with that
submodule's config). The sandbox binds each one found here read-only, as it does the workspace's
own `.git`: those named by `.gitmodules`, and any within MAX_DEPTH folders of the root. The walk is
bounded and its result kept for RESCAN_SECONDS (a big tree costs a walk ~10-200 ms), so a command
pays a few stats. Deeper ones, and those a command makes, are not covered (keel's own git never
runs inside a nested repository; see tools/exec/git_safety.py).
"""

from __future__ import annotations

import os
import re
import time
from collections import deque
from pathlib import Path

MAX_DEPTH = 3  # `a/b/c/.git`
MAX_FOLDERS = 1000  # folders looked into at most (nearest first), per command: ~10 ms
SKIPPED = {".git", ".keel", "node_modules", ".venv", "venv", "__pycache__", ".tox", "target"}
RESCAN_SECONDS = 60.0
_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(?P<path>.+?)\s*$", re.MULTILINE)
_found: dict[Path, tuple[float, list[Path]]] = {}  # root: when it was walked, what was found


def nested_git_entries(root: Path) -> list[Path]:
    """The nested `.git` folders and files under `root` (not root's own, and no links), sorted;
    from a walk at most RESCAN_SECONDS old, each checked to be there still."""
    walked, found = _found.get(root, (0.0, []))
    if time.monotonic() - walked > RESCAN_SECONDS:
        found = _walk(root)
        _found[root] = (time.monotonic(), found)
    return [path for path in found if os.path.lexists(path) and not _linked(path, root)]


def _walk(root: Path) -> list[Path]:
    """The nested `.git` entries `.gitmodules` names or a breadth-first walk to MAX_DEPTH finds."""
    found = set(_declared(root))
    pending, looked = deque([(str(root), 0)]), 0
    while pending and looked < MAX_FOLDERS:
        folder, depth = pending.popleft()
        looked += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name == ".git" and depth > 0 and not entry.is_symlink():
                found.add(Path(entry.path))
            elif depth < MAX_DEPTH and entry.name not in SKIPPED and _is_folder(entry):
                pending.append((entry.path, depth + 1))
    return sorted(found)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _declared(root: Path) -> list[Path]:
    """The `.git` of each submodule `.gitmodules` names, where it is there (and no link)."""
    try:
        text = (root / ".gitmodules").read_text(errors="replace")
    except OSError:
        return []
    found = []
    for match in _SUBMODULE_PATH.finditer(text):
        path = Path(os.path.normpath(root / match["path"] / ".git"))
        inside = root in path.parents and path.parent != root
        if inside and os.path.lexists(path) and not _linked(path, root):
            found.append(path)
    return found


def _linked(path: Path, root: Path) -> bool:
    """Whether `path` or a folder between it and `root` is a symbolic link."""
    current = path
    while current != root:
        if current.is_symlink():
            return True
        current = current.parent
    return False
