"""keel's own memory and environment kept from the commands it runs: the process is made non-dumpable.

A command runs as keel's user; were keel dumpable, it could read /proc/<keel>/environ (API keys)
or /proc/<keel>/mem. Non-dumpable, those files need CAP_SYS_PTRACE, which a confined command
lacks (bubblewrap and the Landlock wrapper drop every capability, root's too).
"""

from __future__ import annotations

import ctypes
import sys

_PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 4, 3


def _prctl(option: int, arg: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    zero = ctypes.c_ulong(0)
    return int(libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), zero, zero, zero))


def hide_process_memory() -> bool:
    """Make this process non-dumpable (Linux); whether it now is. Children are dumpable again after exec."""
    if not sys.platform.startswith("linux"):
        return False
    _prctl(_PR_SET_DUMPABLE, 0)
    return _prctl(_PR_GET_DUMPABLE, 0) == 0
