"""Keep every process a Landlock-confined command starts inside its life: none outlives it, or keel.

landlock_exec.py (standard library only, run as a script) forks the confined command under a
small supervisor that is a child subreaper: a descendant that leaves its group, or its session
(`setsid`), and loses its parent is re-parented to the supervisor instead of init. When the
command ends the supervisor kills whatever it left; when keel dies the kernel signals the
supervisor (PR_SET_PDEATHSIG), which kills them all. bubblewrap does the same with a pid namespace.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from collections.abc import Callable
from types import FrameType

_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
FAILED = 126


def _prctl(option: int, arg: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    zero = ctypes.c_ulong(0)
    if libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), zero, zero, zero) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def descendants(root: int) -> list[int]:
    """The live processes below `root`, by walking /proc's parent links."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as file:
                raw = file.read()
        except OSError:
            continue
        fields = raw[raw.rfind(")") + 2 :].split()
        if fields and fields[0] not in ("Z", "X"):
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    pending = [root]
    while pending:
        below = children.get(pending.pop(), [])
        found += below
        pending += below
    return found


def _signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def _kill_the_rest() -> int:
    """SIGKILL every descendant and reap them all; how many there were."""
    killed = 0
    while left := descendants(os.getpid()):
        killed += len(left)
        _signal_all(left, signal.SIGKILL)
        _reap_all()
    _reap_all()
    return killed


def _reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _exit_like(status: int) -> int:
    """The exit code of the command, or die by the signal that killed it (so keel reports it)."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return 128 + signum
    return os.waitstatus_to_exitcode(status)


def supervise(start: Callable[[], int], *, leftover_note: str | None) -> int:
    """Fork; the child runs `start` (which execs the command); the parent waits, then kills what is left.

    Returns the command's exit code; prints `leftover_note` (to stderr) when it left processes.
    """
    parent = os.getppid()
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # keel died before the death signal was armed
        return FAILED

    def forward(signum: int, frame: FrameType | None) -> None:
        if os.getppid() != parent:  # keel is gone: nothing of the command may stay
            _kill_the_rest()
            os._exit(128 + signum)
        _signal_all(descendants(os.getpid()), signum)

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    child = os.fork()
    if child == 0:
        for signum in _FORWARDED:
            signal.signal(signum, signal.SIG_DFL)
        os._exit(start())
    status = 0
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            break
    left = _kill_the_rest()
    if left and leftover_note:
        print(leftover_note, file=sys.stderr, flush=True)
    return _exit_like(status)
