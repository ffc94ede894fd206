"""A Landlock-confined command's own mount namespace (where keel may make one, as root): a read-only view of every mount but its writable folders, and a /dev/shm of its own.

Landlock governs writes to files, not their attributes: as owner, root could `chmod`, `chown` or
`touch -d` root's files anywhere. In the command's own namespace every mount is made read-only
with one `mount_setattr(AT_RECURSIVE)`, after the writable folders (the workspace, $TMPDIR,
writable_roots) were cloned with `open_tree` as they were, and those clones are attached back on
top: each stays one mount (renames inside the workspace work), and a read-only mount beneath one
stays read-only. Files a command leaves in the host's /dev/shm would outlive it (and Landlock
cannot tell them from other programs'); here /dev/shm is an empty tmpfs that goes with the
command, and Python's multiprocessing locks still work. landlock_exec.py (standard library only)
calls `private_mounts` before it drops the capabilities that mounting needs; the seccomp filter
then keeps the command from mounting anything itself.
"""

from __future__ import annotations

import ctypes
import os

SHARED_MEMORY = "/dev/shm"
_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND = 1, 2, 4, 32, 4096
_MS_REC, _MS_PRIVATE = 1 << 14, 1 << 18
_OPEN_TREE, _MOVE_MOUNT, _MOUNT_SETATTR = 428, 429, 442  # the same on every architecture
_OPEN_TREE_CLONE, _OPEN_TREE_CLOEXEC, _AT_RECURSIVE = 1, 0o2000000, 0x8000
_MOVE_MOUNT_F_EMPTY_PATH, _AT_FDCWD, _MOUNT_ATTR_RDONLY = 4, -100, 1


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _check(result: int, what: str) -> None:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None) -> None:
    mount = _libc().mount
    mount.argtypes = [
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_ulong,
        ctypes.c_char_p,
    ]
    _check(
        mount(_bytes(source), target.encode(), _bytes(kind), flags, _bytes(data)), f"mount {target}"
    )


def _syscall(what: str, *args: object) -> int:
    syscall = _libc().syscall
    syscall.restype = ctypes.c_long
    result = int(syscall(*(ctypes.c_long(arg) if isinstance(arg, int) else arg for arg in args)))
    _check(result, what)
    return result


def writable_folders(writable: list[str]) -> list[str]:
    """The folders among `writable` that lie beneath none of the others, shortest first."""
    folders = sorted({os.path.realpath(path) for path in writable if os.path.isdir(path)}, key=len)
    kept: list[str] = []
    for folder in folders:
        if not any(folder == top or folder.startswith(top.rstrip("/") + "/") for top in kept):
            kept.append(folder)
    return kept


def read_only_view(writable: list[str]) -> None:
    """In our own mount namespace: every mount read-only but the `writable` folders, as they were."""
    clones = []
    try:
        for folder in writable_folders(writable):
            flags = _OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC | _AT_RECURSIVE
            clones.append(
                (
                    folder,
                    _syscall(f"open_tree {folder}", _OPEN_TREE, _AT_FDCWD, folder.encode(), flags),
                )
            )
        attr = _MountAttr(attr_set=_MOUNT_ATTR_RDONLY)
        size = ctypes.sizeof(attr)
        _syscall(
            "mount_setattr /",
            _MOUNT_SETATTR,
            _AT_FDCWD,
            b"/",
            _AT_RECURSIVE,
            ctypes.byref(attr),
            size,
        )
        for folder, clone in clones:
            _syscall(
                f"move_mount {folder}",
                _MOVE_MOUNT,
                clone,
                b"",
                _AT_FDCWD,
                folder.encode(),
                _MOVE_MOUNT_F_EMPTY_PATH,
            )
    finally:
        for _, clone in clones:
            os.close(clone)
    try:  # the working folder still points into the mount now hidden beneath a clone
        os.chdir(os.getcwd())
    except OSError:
        pass


def private_mounts(writable: list[str]) -> list[str]:
    """Enter a mount namespace of our own: read-only but `writable`, with a private /dev/shm;
    returns `writable` plus /dev/shm.

    [] where no namespace can be made (not root): then /dev/shm stays unwritable under Landlock,
    and attributes outside the workspace stay the user's to change, as their files are.
    """
    try:
        _check(_libc().unshare(_CLONE_NEWNS), "unshare")
    except OSError:
        return []
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)  # nothing below leaks to the host
    read_only_view(writable)
    if not os.path.isdir(SHARED_MEMORY):
        return writable
    _mount("tmpfs", SHARED_MEMORY, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777,size=25%")
    return [*writable, SHARED_MEMORY]


def bind_read_only(paths: list[str]) -> None:
    """In our own mount namespace: each path (a folder or a file) bound onto itself, read-only."""
    for path in paths:
        if os.path.islink(path) or not os.path.exists(path):
            raise OSError(2, f"{path} is not there to keep read-only (or is a link)")
        _mount(path, path, None, _MS_BIND | _MS_REC, None)
        _mount(None, path, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY, None)
