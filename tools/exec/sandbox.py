"""The run_command sandbox: a bubblewrap jail or Landlock rules chosen by policy, and a clean environment.

Modes: `read-only` (nothing writable but a temp area), `workspace-write` (the workspace too, but its
.git and .keel, kept read-only), `full-access` (no jail).
Mechanisms, in order: bubblewrap, else Landlock (tools/exec/landlock_exec.py), else the policy's
fallback (refuse, or run unconfined with a warning); tools/exec/sandbox_mechanism.py says which holds.
Every mode gets an environment built from an allow-list plus the variables that keep programs
from prompting or paging.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from keel.tools.base import PROTECTED_NAMES, ToolError
from keel.tools.exec.landlock_exec import wrapper_argv
from keel.tools.exec.landlock_plan import (
    READ_ONLY_WORKSPACE_NOTE,
    ensure_keel_folder,
    landlock_grant,
    landlock_limits,
)
from keel.tools.exec.nested_git import nested_git_entries
from keel.tools.exec.sandbox_mechanism import (
    MechanismKind,
    SandboxMechanism,
    bwrap_user_namespace,
    probe_bwrap,
    sandbox_mechanism,
)
from keel.tools.exec.sandbox_policy import SandboxMode, SandboxPolicy

NON_INTERACTIVE_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "GH_PAGER": "cat",
    "AWS_PAGER": "",
    "EDITOR": "true",
    "VISUAL": "true",
    "GIT_EDITOR": "true",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
    "GCM_INTERACTIVE": "never",
    "SSH_ASKPASS_REQUIRE": "never",
    "TERM": "dumb",
    "NO_COLOR": "1",
    "CLICOLOR": "0",
    "CI": "1",
    "DEBIAN_FRONTEND": "noninteractive",
    "PYTHONUNBUFFERED": "1",
    "PIP_NO_INPUT": "1",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_PROGRESS_BAR": "off",
    "npm_config_yes": "true",
    "npm_config_fund": "false",
    "npm_config_update_notifier": "false",
    "NO_UPDATE_NOTIFIER": "1",
    "HOMEBREW_NO_AUTO_UPDATE": "1",
}

_PASSED_THROUGH = {
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONPATH", "JAVA_HOME", "GOPATH",
    "GOROOT", "GOFLAGS", "GOCACHE", "GOMODCACHE", "CARGO_HOME", "RUSTUP_HOME", "NVM_DIR",
    "NODE_PATH", "PYENV_ROOT", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "CC", "CXX",
    "CFLAGS", "CXXFLAGS", "LDFLAGS", "MAKEFLAGS", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
    "XDG_CACHE_HOME", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
}  # fmt: skip
_PROXIES = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"}
_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|COOKIE|PRIVATE|(?:^|_)(?:AUTH|PASS|PWD|PAT)(?:_|$)",
    re.IGNORECASE,
)
_NO_NETWORK_SIGNS = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Name or service not known|"
    r"Could not resolve host|getaddrinfo|ENOTFOUND|EAI_AGAIN|ENETUNREACH|Connection refused"
)


def is_secret_name(name: str) -> bool:
    """Variables that look like credentials never reach a command, whatever the allow-list says."""
    return bool(_SECRET_NAME.search(name))


def command_environment(
    policy: SandboxPolicy, source: Mapping[str, str], *, temp_dir: str | None
) -> dict[str, str]:
    """The environment of a command: allowed variables from `source`, then the non-interactive ones.

    `temp_dir` is the one temporary folder a confined command may write (None: not confined).
    """
    allowed = _PASSED_THROUGH | set(policy.env_allow)
    if policy.network or policy.mode is SandboxMode.FULL_ACCESS:
        allowed |= _PROXIES
    env = {
        name: value
        for name, value in source.items()
        if (name in allowed or name.upper() in allowed or name.startswith("LC_"))
        and not is_secret_name(name)
    }
    env.setdefault("PATH", os.defpath)
    env.update(NON_INTERACTIVE_ENV)
    if temp_dir is not None:  # writable for sure: keep caches and temporary files there
        env["TMPDIR"] = temp_dir
        env["XDG_CACHE_HOME"] = f"{temp_dir}/.cache"
        env["npm_config_cache"] = f"{temp_dir}/.npm"
    env.update(policy.env)
    return env


async def bwrap_problem(bwrap: str | None) -> str | None:
    """None when bubblewrap works here with the options the jail uses; otherwise why not."""
    return await asyncio.to_thread(probe_bwrap, bwrap)


def _worktree_dirs(root: Path) -> tuple[Path, Path] | None:
    """For a git worktree (its .git is a file): its own git dir and the main repository's common dir."""
    dotgit = root / ".git"
    if not dotgit.is_file():
        return None
    gitdir = Path(dotgit.read_text().partition("gitdir:")[2].strip())
    gitdir = gitdir if gitdir.is_absolute() else (root / gitdir)
    commondir_file = gitdir / "commondir"
    common = gitdir
    if commondir_file.is_file():
        common = gitdir / commondir_file.read_text().strip()
    return Path(os.path.realpath(gitdir)), Path(os.path.realpath(common))


def _git_binds(root: Path, seen_at: str) -> list[str]:
    """Binds that keep .git (the folder, or a worktree's file and the metadata it points at), the
    .git of nested repositories and .keel read-only, so nothing a command writes there runs later outside the jail; `seen_at` is
    where the jail shows the workspace. A missing .keel is made (empty, which git does not see)."""
    binds = []
    ensure_keel_folder(root)
    for name in PROTECTED_NAMES:
        path = root / name
        if path.exists() and not path.is_symlink():
            binds += ["--ro-bind", str(path), _seen(path, root, seen_at)]
    for path in nested_git_entries(root):  # a submodule's, a vendored repository's
        binds += ["--ro-bind", str(path), _seen(path, root, seen_at)]
    if worktree := _worktree_dirs(root):  # metadata kept in the main repository, maybe under /tmp
        for metadata in dict.fromkeys(worktree):
            if metadata.is_dir():
                binds += ["--ro-bind", str(metadata), str(metadata)]
    return binds


def _seen(path: Path, root: Path, seen_at: str) -> str:
    """Where the jail shows a host path: under `seen_at` when it lies in the workspace."""
    try:
        return str(Path(seen_at) / path.relative_to(root))
    except ValueError:
        return str(path)


def _host_root(hidden: set[str]) -> list[str]:
    """A tmpfs root holding each top-level entry of the host's / read-only, but `hidden` ones, so the
    jail can show folders the host does not have (a bench task's /app, /logs)."""
    argv = ["--tmpfs", "/"]
    for entry in sorted(os.scandir("/"), key=lambda item: item.name):
        path = f"/{entry.name}"
        if entry.name in ("proc", "dev", "tmp") or entry.name in hidden:
            continue
        if entry.is_symlink():
            argv += ["--symlink", os.readlink(path), path]
        else:
            argv += ["--ro-bind", path, path]
    return argv


def _programs_under_tmp() -> list[str]:
    """Interpreters and PATH entries that live under /tmp (a venv in a temporary clone, say)."""
    places = [sys.prefix, sys.base_prefix, *os.environ.get("PATH", "").split(os.pathsep)]
    found = []
    for place in places:
        real = os.path.realpath(place) if place else ""
        if real.startswith("/tmp/") and os.path.isdir(real) and real not in found:
            found.append(real)
    return found


def jail_argv(
    bwrap: str,
    policy: SandboxPolicy,
    root: Path,
    readable: list[Path],
    command: list[str],
    shown: dict[str, Path] | None = None,
) -> list[str]:
    """The bwrap command line that runs `command` in the workspace under `policy`; with a
    workspace_mount, `shown` puts host folders read-only where the jail shows them (/tests)."""
    seen_at = policy.workspace_mount or str(root)
    shown = shown if policy.workspace_mount else None
    if policy.workspace_mount:
        mounts = [policy.workspace_mount, *policy.binds, *(shown or {})]
        argv = [bwrap, *_host_root({Path(mount).parts[1] for mount in mounts})]
    else:
        argv = [bwrap, "--ro-bind", "/", "/"]
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # sysctls are writable by uid 0 on file mode alone (kernel.core_pattern runs a program on the host)
    argv += ["--ro-bind", "/proc/sys", "/proc/sys"]
    argv += ["--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"]
    for path in [*readable, *_programs_under_tmp()]:  # what the private /tmp would otherwise hide
        argv += ["--ro-bind", str(path), str(path)]
    if policy.mode is SandboxMode.WORKSPACE_WRITE:
        argv += ["--bind", str(root), seen_at]
        for extra in policy.writable_roots:
            real = os.path.realpath(extra)
            if os.path.isdir(real):
                argv += ["--bind", real, real]
        argv += _git_binds(root, seen_at)
    else:
        argv += ["--ro-bind", str(root), seen_at]
    if policy.workspace_mount:
        for seen, host in policy.binds.items():
            argv += ["--bind", str(host), seen]
        for seen, host in (shown or {}).items():
            argv += ["--ro-bind", str(host), seen]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", *bwrap_user_namespace(bwrap)]
    argv += ["--die-with-parent", "--chdir", seen_at]
    argv += ["--cap-drop", "ALL"]  # else root inside could remount the read-only binds writable
    if not policy.network:
        argv.append("--unshare-net")
    return [*argv, "--", *command]


def container_argv(policy: SandboxPolicy, command: list[str]) -> list[str]:
    """`docker exec` of `command` in the policy's container, in its workspace, with the policy's env."""
    argv = ["docker", "exec", "-w", policy.workspace_mount or "/"]
    for name, value in {**NON_INTERACTIVE_ENV, **policy.env}.items():
        argv += ["-e", f"{name}={value}"]
    return [*argv, str(policy.container), *command]


# Runs the command, then (inside the jail's own pid namespace, where /proc shows only the jail)
# says so if it left processes behind: they die with the jail as soon as this shell exits.
_JAILED_SHELL = """\
"$0" -c "$1"; status=$?
left=0
for proc in /proc/[1-9]*; do
  pid=${proc#/proc/}
  if [ "$pid" = 1 ] || [ "$pid" = $$ ]; then continue; fi
  read -r stat < "$proc/stat" 2>/dev/null || continue
  stat=${stat##*) }
  [ "${stat%% *}" = Z ] || left=$((left + 1))
done
[ "$left" = 0 ] || printf '%s\\n' "$2" >&2
exit "$status"
"""


@dataclass
class CommandPlan:
    """How to run one command: the argv, its environment, the mechanism, and a note to pass on (once)."""

    argv: list[str]
    env: dict[str, str]
    mechanism: SandboxMechanism
    warning: str | None = None
    whole_workspace: bool = (
        False  # Landlock with .git and .keel bound read-only: top-level entries too
    )

    def hints(self, policy: SandboxPolicy, output: str, *, failed: bool) -> list[str]:
        """What the sandbox may have had to do with errors in the command's output."""
        if self.mechanism.kind is MechanismKind.LANDLOCK:
            if "Permission denied" not in output and "Read-only file system" not in output:
                return []
            limits = landlock_limits(policy, self.mechanism, whole_workspace=self.whole_workspace)
            return [f"note: {limits}."]
        if self.mechanism.kind is not MechanismKind.BUBBLEWRAP:
            return []
        hints = []
        if "Read-only file system" in output:
            writable = (
                "only /tmp"
                if policy.mode is SandboxMode.READ_ONLY
                else "the workspace but its .git and .keel (git commits too are refused), and /tmp"
            )
            hints.append(f"note: the {policy.mode.value} sandbox lets commands write {writable}.")
        if failed and not policy.network and _NO_NETWORK_SIGNS.search(output):
            hints.append(
                "note: the sandbox gives commands no network, and each command its own loopback "
                "(a background server is reachable only from within its own command)."
            )
        return hints


async def plan_command(
    policy: SandboxPolicy,
    root: Path,
    readable: list[Path],
    command: str,
    *,
    leftover_note: str,
    temp_dir: Callable[[], Path],
) -> CommandPlan:
    """How to run a shell command as the policy says; a ToolError when the policy refuses to run it.

    `leftover_note` is printed (to stderr) by a jailed command that left background processes;
    `temp_dir` gives the private temp folder of a Landlock-confined command (made on first use).
    """
    shell = shutil.which("bash") or "/bin/sh"
    plain = [shell, "-c", command]
    mechanism = await asyncio.to_thread(sandbox_mechanism, policy)
    if mechanism.kind is MechanismKind.OFF:
        return CommandPlan(plain, command_environment(policy, os.environ, temp_dir=None), mechanism)
    if mechanism.kind is MechanismKind.CONTAINER:
        env = command_environment(policy, os.environ, temp_dir=None)
        return CommandPlan(container_argv(policy, ["bash", "-c", command]), env, mechanism)
    confined = mechanism.kind in (MechanismKind.BUBBLEWRAP, MechanismKind.LANDLOCK)
    writable = not confined or policy.mode is not SandboxMode.WORKSPACE_WRITE
    writable = writable or ensure_keel_folder(root)
    if mechanism.kind is MechanismKind.BUBBLEWRAP:
        bwrap = shutil.which("bwrap") or "bwrap"
        env = command_environment(policy, os.environ, temp_dir="/tmp")
        wrapped = [shell, "-c", _JAILED_SHELL, shell, command, leftover_note]
        note = None if writable else READ_ONLY_WORKSPACE_NOTE
        return CommandPlan(jail_argv(bwrap, policy, root, readable, wrapped), env, mechanism, note)
    if mechanism.kind is MechanismKind.LANDLOCK:
        temp = temp_dir()
        grant = landlock_grant(policy, root, temp)
        argv = wrapper_argv(
            grant.writable,
            read_only=grant.read_only,
            deny_network=not policy.network,
            command=plain,
            leftover_note=leftover_note,
        )
        env = command_environment(policy, os.environ, temp_dir=str(temp))
        limits = landlock_limits(policy, mechanism, whole_workspace=grant.whole_workspace)
        note = (
            f"note: commands run under {mechanism.description}, as {mechanism.missing}: "
            f"{limits}; $TMPDIR is {temp}"
        )
        if not writable:
            note = f"{note}\n{READ_ONLY_WORKSPACE_NOTE}"
        return CommandPlan(argv, env, mechanism, note, grant.whole_workspace)
    if mechanism.kind is MechanismKind.REFUSED:
        raise ToolError(
            f"the {policy.mode.value} sandbox is unavailable ({mechanism.missing}) and the sandbox "
            "policy refuses to run commands without it; install bubblewrap (apt-get install "
            "bubblewrap) or set the sandbox mode to full-access"
        )
    warning = (
        f"warning: {mechanism.missing}, so commands run WITHOUT the {policy.mode.value} sandbox "
        "(install bubblewrap to confine them)"
    )
    env = command_environment(policy, os.environ, temp_dir=None)
    return CommandPlan(plain, env, mechanism, warning)
