"""Which mechanism confines run_command under a policy: bubblewrap, else Landlock, else the policy's fallback.

The probes (does bwrap run here, which Landlock ABI does the kernel offer) run once a process;
after that `sandbox_mechanism` costs a PATH lookup.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from enum import Enum

from pydantic import BaseModel, ConfigDict

from keel.tools.exec import landlock_exec
from keel.tools.exec.sandbox_policy import SandboxMode, SandboxPolicy

NO_LANDLOCK_ENV = "KEEL_NO_LANDLOCK"


class MechanismKind(str, Enum):
    """What holds a sandboxed command, strongest first."""

    CONTAINER = "container"
    BUBBLEWRAP = "bubblewrap"
    LANDLOCK = "landlock"
    UNSANDBOXED = "none"
    REFUSED = "refused"
    OFF = "off"


class SandboxMechanism(BaseModel):
    """The mechanism in force for a policy, with a one-line description a person can read."""

    model_config = ConfigDict(frozen=True)

    kind: MechanismKind
    description: str
    landlock_abi: int | None = None
    missing: str = ""  # why the stronger mechanisms cannot run here

    @property
    def confines(self) -> bool:
        return self.kind in (
            MechanismKind.CONTAINER,
            MechanismKind.BUBBLEWRAP,
            MechanismKind.LANDLOCK,
        )

    @property
    def tcp_denied(self) -> bool:
        return self.landlock_abi is not None and self.landlock_abi >= landlock_exec.NETWORK_ABI

    def __str__(self) -> str:
        return self.description


_bwrap_probes: dict[str, str | None] = {}
_bwrap_user_namespaces: dict[str, bool] = {}

# A user namespace of its own (whose capabilities count nowhere else) in which no further one can
# be made: root's commands then hold no capability that the host honours, even one regained.
USER_NAMESPACE_FLAGS = ["--unshare-user", "--disable-userns"]


def probe_bwrap(bwrap: str | None) -> str | None:
    """None when bubblewrap works here with the options the jail uses; otherwise why not.

    The jail gets a user namespace when the kernel allows one (`bwrap_user_namespace` says).
    """
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    if bwrap in _bwrap_probes:
        return _bwrap_probes[bwrap]
    probe = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    probe += ["--ro-bind", "/proc/sys", "/proc/sys"]
    probe += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net"]
    probe += ["--die-with-parent", "--cap-drop", "ALL"]
    problem = _trial([*probe, *USER_NAMESPACE_FLAGS, "true"], "bubblewrap")
    _bwrap_user_namespaces[bwrap] = problem is None
    if problem is not None:
        problem = _trial([*probe, "true"], "bubblewrap")
    _bwrap_probes[bwrap] = problem
    return problem


def bwrap_user_namespace(bwrap: str) -> list[str]:
    """The flags that give the jail its own user namespace, or none where the kernel refuses one."""
    probe_bwrap(bwrap)
    return USER_NAMESPACE_FLAGS if _bwrap_user_namespaces.get(bwrap) else []


def _trial(argv: list[str], what: str) -> str | None:
    """None when argv runs and exits 0 (within 10 s); otherwise what went wrong, naming `what`."""
    try:
        done = subprocess.run(
            argv, check=False, stdin=subprocess.DEVNULL, capture_output=True, timeout=10
        )
    except (subprocess.TimeoutExpired, OSError) as exc:
        return f"{what} failed to start ({exc})"
    if done.returncode != 0:
        return f"{what} does not work here: {done.stderr.decode(errors='replace').strip()}"
    return None


@functools.cache
def _probe_landlock() -> int | str:
    """The Landlock ABI when a confined child really starts here; otherwise why not."""
    try:
        abi = landlock_exec.abi_version()
    except OSError as exc:
        return landlock_exec.unavailable_reason(exc)
    trial = landlock_exec.wrapper_argv([], deny_network=True, command=["/bin/sh", "-c", ":"])
    return _trial(trial, "Landlock") or abi


def probe_landlock() -> int | str:
    """The Landlock ABI usable here, or why Landlock is not used (it can be turned off for tests)."""
    if os.environ.get(NO_LANDLOCK_ENV):
        return f"Landlock is turned off ({NO_LANDLOCK_ENV} is set)"
    return _probe_landlock()


def sandbox_mechanism(policy: SandboxPolicy) -> SandboxMechanism:
    """The mechanism that confines commands under `policy` on this machine (probed once a process)."""
    if policy.container:
        return SandboxMechanism(
            kind=MechanismKind.CONTAINER, description=f"the container {policy.container}"
        )
    if policy.mode is SandboxMode.FULL_ACCESS:
        return SandboxMechanism(kind=MechanismKind.OFF, description="off (full-access)")
    bwrap_missing = probe_bwrap(shutil.which("bwrap"))
    if bwrap_missing is None:
        return SandboxMechanism(kind=MechanismKind.BUBBLEWRAP, description="bubblewrap")
    landlock = probe_landlock()
    if isinstance(landlock, int):
        return SandboxMechanism(
            kind=MechanismKind.LANDLOCK,
            description=f"landlock (ABI {landlock}: {_landlock_holds(policy, landlock)})",
            landlock_abi=landlock,
            missing=bwrap_missing,
        )
    missing = f"{bwrap_missing}; {landlock}"
    if policy.fallback == "refuse":
        return SandboxMechanism(
            kind=MechanismKind.REFUSED, description=f"none (commands refused: {missing})",
            missing=missing,
        )  # fmt: skip
    return SandboxMechanism(
        kind=MechanismKind.UNSANDBOXED, description=f"none (unsandboxed: {missing})",
        missing=missing,
    )  # fmt: skip


def _landlock_holds(policy: SandboxPolicy, abi: int) -> str:
    if policy.network:
        return "writes confined, network allowed"
    if abi >= landlock_exec.NETWORK_ABI:
        return "writes confined, TCP denied"
    return f"writes confined; network NOT confined: TCP rules need ABI {landlock_exec.NETWORK_ABI}"
