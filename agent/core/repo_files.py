"""A repository's own files, read to give the model (the project's files with a task, its instructions, its
skills, commands and agent definitions): never through a link out of the repository, as the tools never read one
(a cloned repo's `AGENTS.md -> ~/.ssh/id_rsa` would send the key to the model's provider)."""

from __future__ import annotations

import os
from pathlib import Path


def read_inside(root: Path, name: str) -> bytes | None:
    """The bytes of `root / name`, None when it cannot be read or, its links followed, is not inside `root`."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(root / name)
    if os.path.commonpath([real_root, real]) != real_root:
        return None
    try:
        with open(real, "rb") as file:
            return file.read()
    except OSError:
        return None


def text_within(root: Path | None, path: Path) -> str:
    """The text of `path`, which must stay inside `root` when one is given (a repository's file; None: the
    person's own, read as it is). OSError when it cannot be read or leaves `root`."""
    if root is None:
        return path.read_text(encoding="utf-8", errors="replace")
    data = read_inside(root, str(path))
    if data is None:
        raise OSError(f"{path} cannot be read or links out of the repository")
    return data.decode("utf-8", errors="replace")
