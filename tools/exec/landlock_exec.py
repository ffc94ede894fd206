"""Landlock for run_command: confine a command's writes (and TCP) to a few folders, then exec it.

Run as a script between keel and the command (`python -I -S landlock_exec.py --write DIR ...
[--deny-network] -- ARGV`), so it uses the standard library only and starts in ~10 ms. keel does
not apply the rules in `preexec_fn` instead: that runs Python between fork and exec in a child of
a process with threads (asyncio's to_thread, the TUI's workers), where a lock another thread held
at fork time can deadlock the child, and it rules out the vfork/posix_spawn fast path.

Landlock only allows: a write right granted on a folder holds everywhere beneath it, and nothing
beneath can be taken back out (so a writable workspace cannot keep its .git/hooks read-only).
Reads, executes and device ioctls are not restricted. ABI 1 (Linux 5.13-5.18) also refuses
renames across folders (EXDEV; mv falls back to copying). From ABI 6 the command cannot signal
processes outside its own domain (keel, the user's programs) and, with the network off, cannot
connect to abstract unix sockets made outside it.

Landlock alone leaves root's command every capability, so the command also runs with
no_new_privs, no capabilities (capabilities.py), a seccomp filter (seccomp_filter.py: no device
nodes, mounts, host names, tracing, kernel modules, new namespaces; with the network off no
socket but Unix and TCP ones), under a supervisor that ends all it started (command_reaper.py),
and, where the wrapper may make a mount namespace (root), with every mount read-only but the
writable folders (Landlock does not govern chmod, chown or utimes) and a /dev/shm of its own
(mount_jail.py).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
import sys
from collections.abc import Sequence

try:
    from keel.tools.exec import capabilities, command_reaper, mount_jail, seccomp_filter
except ImportError:  # run as a script (-I -S): the sibling modules lie beside it
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import capabilities  # type: ignore[no-redef,import-not-found]
    import command_reaper  # type: ignore[no-redef,import-not-found]
    import mount_jail  # type: ignore[no-redef,import-not-found]
    import seccomp_filter  # type: ignore[no-redef,import-not-found]

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_PDEATHSIG = 1

_WRITE_FILE = 1 << 1
_WRITES_ABI1 = sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))  # write, remove, make
_REFER = 1 << 13  # ABI 2: link or rename into another folder
_TRUNCATE = 1 << 14  # ABI 3
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

NETWORK_ABI = 4
SCOPE_ABI = 6
WRAPPER_FAILED = 126


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _call(function: str, *args: object) -> int:
    """A libc function with every integer passed as a C long (syscall() reads longs); OSError on failure."""
    call = getattr(_libc(), function)
    call.restype = ctypes.c_long
    result: int = call(*(ctypes.c_long(arg) if isinstance(arg, int) else arg for arg in args))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def _syscall(*args: object) -> int:
    return _call("syscall", *args)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version; OSError ENOSYS (not built in) or EOPNOTSUPP (disabled)."""
    return _syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)


def unavailable_reason(exc: OSError) -> str:
    """Why Landlock cannot be used, from the error of `abi_version`."""
    if exc.errno == errno.ENOSYS:
        return "the kernel has no Landlock (ENOSYS: it needs Linux 5.13+ built with it)"
    if exc.errno == errno.EOPNOTSUPP:
        return "Landlock is disabled in this kernel (EOPNOTSUPP: 'landlock' is not in lsm=)"
    return f"Landlock failed: {exc.strerror}"


def handled_writes(abi: int) -> int:
    """Every write-like file-system right this ABI knows: all of them are denied unless granted."""
    rights = _WRITES_ABI1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    return rights


def restrict_self(writable: list[str], *, deny_network: bool) -> int:
    """Confine this process and its future children; returns the ABI that held."""
    abi = abi_version()
    writes = handled_writes(abi)
    attr = _RulesetAttr(handled_access_fs=writes)
    size = ctypes.sizeof(ctypes.c_uint64)
    if abi >= NETWORK_ABI:
        size += ctypes.sizeof(ctypes.c_uint64)
        if deny_network:  # handled, and no rule grants any port: every TCP bind and connect fails
            attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
    if abi >= SCOPE_ABI:
        size += ctypes.sizeof(ctypes.c_uint64)
        attr.scoped = _SCOPE_SIGNAL | (_SCOPE_ABSTRACT_UNIX if deny_network else 0)
    ruleset = _syscall(_CREATE_RULESET, ctypes.byref(attr), size, 0)
    try:
        for path in writable:
            _allow_writes(ruleset, path, writes)
        _call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # required to restrict without privileges
        _syscall(_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    return abi


def _allow_writes(ruleset: int, path: str, writes: int) -> None:
    """Grant the write rights beneath a folder (or on one file); a missing path is skipped."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
        rights = writes if is_dir else writes & (_WRITE_FILE | _TRUNCATE)
        rule = _PathBeneathAttr(allowed_access=rights, parent_fd=fd)
        _syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0)
    finally:
        os.close(fd)


def confine_and_exec(
    writable: list[str], *, read_only: list[str], deny_network: bool, command: list[str]
) -> int:
    """In the supervised child: every confinement, then exec; an exit code only when one failed.

    `read_only` paths (beneath a writable one) are bound read-only in the command's own mount
    namespace; without one the command does not run (keel asked for them knowing it could make one).
    """
    try:
        _call("prctl", _PR_SET_PDEATHSIG, 9, 0, 0, 0)  # SIGKILL should the supervisor vanish
        mounted = mount_jail.private_mounts(writable)
        if read_only and not mounted:
            raise OSError(errno.EPERM, "no mount namespace to keep .git and .keel read-only in")
        mount_jail.bind_read_only(read_only)
        writable = mounted or writable
        restrict_self(writable, deny_network=deny_network)
        capabilities.drop_all()
        if seccomp_filter.supported():
            seccomp_filter.install(deny_network=deny_network)
        os.execv(command[0], command)
    except OSError as exc:
        print(f"keel landlock: could not confine {command[0]}: {exc}", file=sys.stderr)
    return WRAPPER_FAILED


def wrapper_argv(
    writable: list[str],
    *,
    read_only: Sequence[str] = (),
    deny_network: bool,
    command: list[str],
    leftover_note: str | None = None,
) -> list[str]:
    """The argv that runs `command` confined by this script."""
    # imported rather than run as a script: its compiled form is cached, a script is compiled each time
    folder = os.path.dirname(os.path.abspath(__file__))
    boot = f"import sys; sys.path.insert(0, {folder!r}); import landlock_exec; landlock_exec.run()"
    argv = [sys.executable, "-I", "-S", "-c", boot]
    for path in writable:
        argv += ["--write", path]
    for path in read_only:
        argv += ["--read-only", path]
    if deny_network:
        argv.append("--deny-network")
    if leftover_note:
        argv += ["--leftover-note", leftover_note]
    return [*argv, "--", *command]


def main(args: list[str]) -> int:
    """Parse `--write PATH`..., `--read-only PATH`..., `--deny-network`, `--leftover-note TEXT`, `--`, then run the command confined."""
    paths: dict[str, list[str]] = {"--write": [], "--read-only": []}
    deny_network = False
    note: str | None = None
    while args and args[0] != "--":
        option, args = args[0], args[1:]
        if option in ("--write", "--read-only", "--leftover-note") and args:
            if option == "--leftover-note":
                note = args[0]
            else:
                paths[option].append(args[0])
            args = args[1:]
        elif option == "--deny-network":
            deny_network = True
        else:
            print(f"keel landlock: unknown option {option!r}", file=sys.stderr)
            return 2
    command = args[1:]
    if not command:
        print("keel landlock: no command after --", file=sys.stderr)
        return 2
    try:
        return command_reaper.supervise(
            lambda: confine_and_exec(
                paths["--write"],
                read_only=paths["--read-only"],
                deny_network=deny_network,
                command=command,
            ),
            leftover_note=note,
        )
    except OSError as exc:
        print(f"keel landlock: could not supervise {command[0]}: {exc}", file=sys.stderr)
    return WRAPPER_FAILED


def run() -> None:
    """The script's entry: main, then out without the interpreter's teardown (every command waits for it)."""
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
