"""A repository's own files, read to give the model (the project's files with a task, its instructions): never
through a link out of the repository, as the tools never read one (a cloned repo's `AGENTS.md -> ~/.ssh/id_rsa`
would send the key to the model's provider)."""

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
