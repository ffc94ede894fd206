"""The one cross-process lock of keel's stores: an exclusive flock on a lock file beside what it guards."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


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


def try_hold_lock(path: Path) -> TextIO | None:
    """Take `path` (created with its folder if missing) exclusively without waiting, for as long as the
    returned handle stays open (closing it, or the process ending, releases it); None when another holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle
