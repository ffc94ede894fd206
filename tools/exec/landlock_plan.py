"""What a Landlock-confined command may write, and how its workspace's .git and .keel stay read-only.

Landlock cannot take a write right back beneath a folder it granted. Where keel may make a mount
namespace (CAP_SYS_ADMIN: root outside a container that dropped it), the wrapper binds .git and
.keel read-only in the command's own namespace and the whole workspace is granted. Elsewhere the
workspace is granted entry by entry without them, so commands cannot add, delete or rename entries
at its top level (the file tools can).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from keel.prompts import render
from keel.tools.base import PROTECTED_NAMES
from keel.tools.exec import seccomp_filter
from keel.tools.exec.nested_git import nested_git_entries
from keel.tools.exec.sandbox_mechanism import SandboxMechanism
from keel.tools.exec.sandbox_policy import SandboxMode, SandboxPolicy

# Not /dev itself: root's command could write disks and loop devices there (or keep files in /dev/shm)
WRITABLE_DEVICES = [
    "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx",
    "/dev/pts",
]  # fmt: skip
_CAP_SYS_ADMIN = 21


@lru_cache(maxsize=1)
def may_make_mount_namespace() -> bool:
    """Whether this process holds CAP_SYS_ADMIN, which a new mount namespace (and its binds) needs."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> _CAP_SYS_ADMIN & 1)
    return False


READ_ONLY_WORKSPACE_NOTE = render("read_only_workspace")
_CANNOT_WRITE = (errno.EROFS, errno.EACCES, errno.EPERM)


def ensure_keel_folder(root: Path) -> bool:
    """A missing .keel is made (empty, which git does not see): else a command could make the config
    keel reads next time. False when the workspace cannot be written (a read-only checkout): then
    no command can make one either."""
    if os.path.lexists(root / ".keel"):
        return True
    try:
        (root / ".keel").mkdir()
    except OSError as exc:
        if exc.errno in _CANNOT_WRITE:
            return False
        raise
    return True


@dataclass(frozen=True)
class LandlockGrant:
    """The paths a confined command may write, and those the wrapper binds read-only first."""

    writable: list[str]
    read_only: list[str]

    @property
    def whole_workspace(self) -> bool:
        return bool(self.read_only)


def landlock_grant(policy: SandboxPolicy, root: Path, temp_dir: Path) -> LandlockGrant:
    """Its temp dir and a few devices, in workspace-write the workspace (but .git and .keel) and
    writable_roots too."""
    paths = [str(temp_dir), *WRITABLE_DEVICES]
    if policy.mode is not SandboxMode.WORKSPACE_WRITE:
        return LandlockGrant(paths, [])
    extras = [os.path.realpath(extra) for extra in policy.writable_roots]
    extras = [extra for extra in extras if os.path.isdir(extra)]
    ensure_keel_folder(root)
    protected = [root / name for name in PROTECTED_NAMES]
    if may_make_mount_namespace() and not any(path.is_symlink() for path in protected):
        present = [str(path) for path in protected if path.exists()]
        present += [str(path) for path in nested_git_entries(root)]
        return LandlockGrant([*paths, str(root), *extras], present)
    entries = [
        str(entry)
        for entry in sorted(root.iterdir())
        if entry.name.lower() not in PROTECTED_NAMES and not entry.is_symlink()
    ]
    return LandlockGrant([*paths, *entries, *extras], [])


def landlock_limits(
    policy: SandboxPolicy, mechanism: SandboxMechanism, *, whole_workspace: bool
) -> str:
    """What a Landlock-confined command may not do, in a sentence for the model."""
    top_level = (
        ""
        if whole_workspace
        else ", and no new entries at its top level: create those with write_file"
    )
    places = (
        f"the workspace's files and folders (not .git or .keel{top_level}) and $TMPDIR"
        if policy.mode is SandboxMode.WORKSPACE_WRITE
        else "$TMPDIR"
    )
    limits = f"the {policy.mode.value} sandbox lets commands write only {places} (not /tmp)"
    if mechanism.tcp_denied and not policy.network:
        limits += " and denies every TCP connection and listening socket, loopback included"
        if seccomp_filter.supported():
            limits += ", and every UDP, raw or netlink socket"
    return limits
