"""Drop every Linux capability of this process for good: bounding set, ambient, effective, permitted, inheritable.

Root keeps its capabilities under Landlock: it could make device nodes, chown any file, set the
host name, read other processes' memory. landlock_exec.py calls `drop_all` (standard library
only) before it execs a command; with the bounding set empty, exec as uid 0 regains none.
"""

from __future__ import annotations

import ctypes
import functools
import os

_PR_CAPBSET_READ, _PR_CAPBSET_DROP = 23, 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAPABILITY_VERSION_3 = 0x20080522


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, arg: int) -> int:
    prctl = _libc().prctl
    prctl.restype = ctypes.c_int
    zero = ctypes.c_ulong(0)
    return int(prctl(ctypes.c_int(option), ctypes.c_ulong(arg), zero, zero, zero))


def _raise_errno(what: str) -> None:
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")


def last_capability() -> int:
    """The highest capability number this kernel knows."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as file:
            return int(file.read())
    except (OSError, ValueError):
        cap = 0
        while _prctl(_PR_CAPBSET_READ, cap + 1) >= 0:
            cap += 1
        return cap


def drop_all() -> None:
    """Empty every capability set of this process; OSError when one cannot be emptied."""
    for cap in range(last_capability() + 1):
        if _prctl(_PR_CAPBSET_DROP, cap) != 0:
            if os.geteuid() != 0:  # without CAP_SETPCAP; no_new_privs keeps it from mattering
                break
            _raise_errno("dropping the capability bounding set")
    if _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL) != 0:
        _raise_errno("clearing ambient capabilities")
    header = _Header(_CAPABILITY_VERSION_3, 0)
    data = (_Data * 2)()
    if _libc().capset(ctypes.byref(header), ctypes.byref(data)) != 0:
        _raise_errno("capset")


def held_capabilities(pid: int | str = "self") -> dict[str, int]:
    """The capability sets of a process as /proc shows them (CapEff, CapPrm, CapBnd, ...)."""
    sets = {}
    with open(f"/proc/{pid}/status") as file:
        for line in file:
            name, _, value = line.partition(":")
            if name.startswith("Cap"):
                sets[name] = int(value.strip(), 16)
    return sets
