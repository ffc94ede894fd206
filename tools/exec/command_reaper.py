"""Keep every process a Landlock-confined command starts inside its life: none outlives it, or keel.

landlock_exec.py (standard library only, run as a script) forks the confined command under a
small supervisor that is a child subreaper: a descendant that leaves its group, or its session
(`setsid`), and loses its parent is re-parented to the supervisor instead of init. When the
command ends the supervisor kills whatever it left; when keel dies the kernel signals the
supervisor (PR_SET_PDEATHSIG), which kills them all. bubblewrap does the same with a pid namespace.
"""

from __future__ import annotations

import _signal as signal  # type: ignore[import-not-found]  # `signal` builds enums: ~15 ms a command
import ctypes
import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs every command ~15 ms
if TYPE_CHECKING:
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
    """The live processes below `root`, from /proc's lists of children (else its parent links)."""
    found: list[int] = []
    pending = [root]
    while pending:
        below = _children(pending.pop())
        found += below
        pending += below
    return found


def _children(pid: int) -> list[int]:
    """The children of one process: /proc/PID/task/*/children, or a scan of every process's parent."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        found = []
        for task in tasks:
            with open(f"/proc/{pid}/task/{task}/children") as file:
                found += [int(child) for child in file.read().split()]
        return found
    except FileNotFoundError:  # gone, or a kernel without CONFIG_PROC_CHILDREN
        if os.path.exists(f"/proc/{pid}/task"):
            return [child for child, parent in _parents().items() if parent == pid]
        return []
    except OSError:
        return []


def _parents() -> dict[int, int]:
    parents = {}
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
            parents[int(entry)] = int(fields[1])
    return parents


def _signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def _kill_the_rest() -> int:
    """SIGKILL every descendant and reap them all; how many there were."""
    if not _has_children():  # a subreaper with no child has no descendant: the usual case
        return 0
    killed = 0
    while left := descendants(os.getpid()):
        killed += len(left)
        _signal_all(left, signal.SIGKILL)
        _reap_all()
    _reap_all()
    return killed


def _has_children() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return False
    return True  # one running (pid 0) or one just reaped: there may be more


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
        import resource  # only here: it costs the common case a few milliseconds

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
