"""The one cross-process lock of keel's stores: an exclusive flock on a lock file beside what it guards."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold `path` (created with its folder if missing) exclusively: across processes and threads alike,
    since flock conflicts between any two open() of the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def hold(path: Path) -> int | None:
    """Take `path` (created if missing) exclusively and keep it until the returned descriptor is closed or the
    process ends; None when another open of the file holds it already."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def held(path: Path) -> bool:
    """Whether some open of `path` holds it (in this process or another); False for a missing file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False
