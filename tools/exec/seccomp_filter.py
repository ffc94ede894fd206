"""A seccomp filter for Landlock-confined commands: the system calls that reach past a write jail, denied.

Landlock limits where a command writes; root's command could still make device nodes, mount,
rename the host, trace or load code into the kernel, or reach the network over UDP. This filter
(classic BPF built with ctypes, standard library only: landlock_exec.py loads it as a script)
refuses those calls with an errno, so programs see an ordinary failure. It also refuses new
namespaces (where a command would regain capabilities) and io_uring (which makes sockets
without the socket call). A 32-bit or x32 call on x86_64 would bypass the numbers, so it is refused too.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os

_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_RET_KILL_PROCESS, _RET_ERRNO, _RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
_LD_W_ABS, _JEQ_K, _JSET_K, _JGE_K, _AND_K, _RET_K = 0x20, 0x15, 0x45, 0x35, 0x54, 0x06
_NR, _ARCH = 0, 4


def _arg(index: int) -> int:
    """Offset of a system call argument's low 32 bits in struct seccomp_data (little-endian)."""
    return 16 + 8 * index


_S_IFMT, _S_IFCHR, _S_IFBLK = 0o170000, 0o020000, 0o060000
_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10
_SOCK_TYPE_MASK, _SOCK_STREAM, _IPPROTO_TCP = 0xF, 1, 6
_CLONE_NEW = 0x7E020080  # CLONE_NEWNS, CGROUP, UTS, IPC, USER, PID, NET and TIME
_X32_BIT = 0x40000000


class _Table:
    """One architecture's audit number and the system call numbers the filter looks at.

    A plain class: dataclasses would add ~15 ms to the start of every confined command.
    """

    def __init__(
        self,
        *,
        arch: int,
        denied: dict[str, int],
        mknod: dict[int, int],  # call: the argument holding the mode
        clone: int,
        clone3: int,
        socket: int,
    ) -> None:
        self.arch, self.denied, self.mknod = arch, denied, mknod
        self.clone, self.clone3, self.socket = clone, clone3, socket


_SYSCALLS = {
    "x86_64": _Table(
        arch=0xC000003E,
        denied={
            "mount": 165, "umount2": 166, "pivot_root": 155, "sethostname": 170,
            "setdomainname": 171, "ptrace": 101, "kexec_load": 246, "kexec_file_load": 320,
            "init_module": 175, "finit_module": 313, "delete_module": 176, "swapon": 167,
            "swapoff": 168, "reboot": 169, "unshare": 272, "setns": 308, "keyctl": 250,
            "add_key": 248, "request_key": 249, "process_vm_readv": 310,
            "process_vm_writev": 311, "io_uring_setup": 425, "open_tree": 428,
            "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
            "mount_setattr": 442, "acct": 163, "iopl": 172, "ioperm": 173,
        },
        mknod={133: 1, 259: 2},
        clone=56, clone3=435, socket=41,
    ),
    "aarch64": _Table(
        arch=0xC00000B7,
        denied={
            "mount": 40, "umount2": 39, "pivot_root": 41, "sethostname": 161,
            "setdomainname": 162, "ptrace": 117, "kexec_load": 104, "kexec_file_load": 294,
            "init_module": 105, "finit_module": 273, "delete_module": 106, "swapon": 224,
            "swapoff": 225, "reboot": 142, "unshare": 97, "setns": 268, "keyctl": 219,
            "add_key": 217, "request_key": 218, "process_vm_readv": 270,
            "process_vm_writev": 271, "io_uring_setup": 425, "open_tree": 428,
            "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
            "mount_setattr": 442, "acct": 89,
        },
        mknod={33: 2},
        clone=220, clone3=435, socket=198,
    ),
}  # fmt: skip


class _Instruction(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


Op = tuple[int, int, int, int]


def _ret(value: int) -> Op:
    return (_RET_K, 0, 0, value)


def _deny(code: int) -> Op:
    return _ret(_RET_ERRNO | code)


def _load(offset: int) -> Op:
    return (_LD_W_ABS, 0, 0, offset)


def _if_call(number: int, body: list[Op]) -> list[Op]:
    """`body` (which must end in a return on every path) when the call is `number`; else on."""
    return [(_JEQ_K, 0, len(body), number), *body]


def _mknod_rule(mode_arg: int) -> list[Op]:
    """Device nodes refused (FIFOs, sockets and plain files are fine)."""
    return [
        _load(_arg(mode_arg)),
        (_AND_K, 0, 0, _S_IFMT),
        (_JEQ_K, 2, 0, _S_IFCHR),
        (_JEQ_K, 1, 0, _S_IFBLK),
        _ret(_RET_ALLOW),
        _deny(errno.EPERM),
    ]


def _clone_rule() -> list[Op]:
    """Threads and processes, but no new namespaces."""
    return [_load(_arg(0)), (_JSET_K, 1, 0, _CLONE_NEW), _ret(_RET_ALLOW), _deny(errno.EPERM)]


def _socket_rule() -> list[Op]:
    """Unix sockets and TCP (which Landlock governs); nothing else reaches out: no UDP, raw, netlink."""
    return [
        _load(_arg(0)),
        (_JEQ_K, 3, 0, _AF_UNIX),
        (_JEQ_K, 3, 0, _AF_INET),
        (_JEQ_K, 2, 0, _AF_INET6),
        _deny(errno.EACCES),
        _ret(_RET_ALLOW),  # AF_UNIX
        _load(_arg(1)),  # AF_INET, AF_INET6
        (_AND_K, 0, 0, _SOCK_TYPE_MASK),
        (_JEQ_K, 0, 4, _SOCK_STREAM),
        _load(_arg(2)),
        (_JEQ_K, 1, 0, 0),
        (_JEQ_K, 0, 1, _IPPROTO_TCP),
        _ret(_RET_ALLOW),
        _deny(errno.EACCES),
    ]


def supported() -> bool:
    """Whether this machine's system call numbers are known here."""
    return os.uname().machine in _SYSCALLS


def program(*, deny_network: bool) -> list[Op]:
    """The filter for this machine: `deny_network` also refuses every socket but Unix and TCP ones."""
    table = _SYSCALLS[os.uname().machine]
    ops: list[Op] = [_load(_ARCH), (_JEQ_K, 1, 0, table.arch), _ret(_RET_KILL_PROCESS)]
    ops.append(_load(_NR))
    if os.uname().machine == "x86_64":
        ops += [(_JGE_K, 0, 1, _X32_BIT), _deny(errno.ENOSYS)]
    for number in table.denied.values():
        ops += _if_call(number, [_deny(errno.EPERM)])
    for number, mode_arg in table.mknod.items():
        ops += _if_call(number, _mknod_rule(mode_arg))
    ops += _if_call(table.clone, _clone_rule())
    ops += _if_call(table.clone3, [_deny(errno.ENOSYS)])  # flags out of reach: libc uses clone
    if deny_network:
        ops += _if_call(table.socket, _socket_rule())
    ops.append(_ret(_RET_ALLOW))
    return ops


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def install(*, deny_network: bool) -> None:
    """Load the filter into this process (no_new_privs must be set); OSError when the kernel refuses."""
    ops = program(deny_network=deny_network)
    instructions = (_Instruction * len(ops))(*(_Instruction(*op) for op in ops))
    prog = _Program(len(ops), instructions)
    prctl = _libc().prctl
    prctl.restype = ctypes.c_int
    args = (ctypes.c_ulong(_SECCOMP_MODE_FILTER), ctypes.byref(prog), ctypes.c_ulong(0))
    if prctl(ctypes.c_int(_PR_SET_SECCOMP), *args, ctypes.c_ulong(0)) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"seccomp: {errno.errorcode.get(code, code)}")
