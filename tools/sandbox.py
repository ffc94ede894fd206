"""The run_command sandbox: a bubblewrap jail chosen by policy, and a clean environment without secrets.

Modes: `read-only` (nothing writable but a private /tmp), `workspace-write` (the workspace too, with
its git hooks and config kept read-only), `full-access` (no jail). Every mode gets an environment
built from an allow-list plus the variables that keep programs from prompting or paging.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tools.base import ToolError
from tools.sandbox_policy import SandboxMode, SandboxPolicy

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
    policy: SandboxPolicy, source: Mapping[str, str], *, jailed: bool
) -> dict[str, str]:
    """The environment of a command: allowed variables from `source`, then the non-interactive ones."""
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
    if jailed:  # only /tmp is writable for sure: keep caches and temporary files there
        env["TMPDIR"] = "/tmp"
        env["XDG_CACHE_HOME"] = "/tmp/.cache"
        env["npm_config_cache"] = "/tmp/.npm"
    return env


_probe_results: dict[str, str | None] = {}


async def bwrap_problem(bwrap: str | None) -> str | None:
    """None when bubblewrap works here with the options the jail uses; otherwise why not."""
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    if bwrap in _probe_results:
        return _probe_results[bwrap]
    probe = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    probe += ["--unshare-pid", "--unshare-ipc", "--unshare-net", "--die-with-parent"]
    probe += ["--cap-drop", "ALL", "true"]
    try:
        process = await asyncio.create_subprocess_exec(
            *probe,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(process.communicate(), 10)
    except (TimeoutError, OSError) as exc:
        problem: str | None = f"bubblewrap failed to start ({exc})"
    else:
        message = err.decode(errors="replace").strip()
        problem = None if process.returncode == 0 else f"bubblewrap does not work here: {message}"
    _probe_results[bwrap] = problem
    return problem


def _git_binds(root: Path) -> list[str]:
    """Binds that keep .git/hooks and .git/config read-only (so nothing runs later outside the jail)."""
    dotgit = root / ".git"
    if dotgit.is_file():  # a worktree: .git points at metadata kept in the main repository
        gitdir = Path(dotgit.read_text().partition("gitdir:")[2].strip())
        gitdir = gitdir if gitdir.is_absolute() else (root / gitdir)
        commondir_file = gitdir / "commondir"
        common = gitdir
        if commondir_file.is_file():
            common = gitdir / commondir_file.read_text().strip()
        gitdir, common = Path(os.path.realpath(gitdir)), Path(os.path.realpath(common))
        binds = ["--ro-bind", str(dotgit), str(dotgit)]
        for writable in dict.fromkeys([common, gitdir]):
            if writable.is_dir():
                binds += ["--bind", str(writable), str(writable)]
        (common / "hooks").mkdir(exist_ok=True)
        protected = [common / "hooks", common / "config", gitdir / "config.worktree"]
    elif dotgit.is_dir():
        (dotgit / "hooks").mkdir(exist_ok=True)
        binds = ["--bind", str(dotgit), str(dotgit)]  # a mount point cannot be renamed away
        protected = [dotgit / "hooks", dotgit / "config"]
    else:
        return []
    for path in protected:
        if path.exists():
            binds += ["--ro-bind", str(path), str(path)]
    return binds


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
    bwrap: str, policy: SandboxPolicy, root: Path, readable: list[Path], command: list[str]
) -> list[str]:
    """The bwrap command line that runs `command` in the workspace under `policy`."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for path in [*readable, *_programs_under_tmp()]:  # what the private /tmp would otherwise hide
        argv += ["--ro-bind", str(path), str(path)]
    if policy.mode is SandboxMode.WORKSPACE_WRITE:
        argv += ["--bind", str(root), str(root)]
        for extra in policy.writable_roots:
            real = os.path.realpath(extra)
            if os.path.isdir(real):
                argv += ["--bind", real, real]
        argv += _git_binds(root)
    else:
        argv += ["--ro-bind", str(root), str(root)]
    argv += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--chdir", str(root)]
    argv += ["--cap-drop", "ALL"]  # else root inside could remount the read-only binds writable
    if not policy.network:
        argv.append("--unshare-net")
    return [*argv, "--", *command]


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
    """How to run one command: the argv, its environment, and a warning to pass on (once)."""

    argv: list[str]
    env: dict[str, str]
    jailed: bool
    warning: str | None = None

    def hints(self, policy: SandboxPolicy, output: str, *, failed: bool) -> list[str]:
        """What the sandbox may have had to do with errors in the command's output."""
        if not self.jailed:
            return []
        hints = []
        if "Read-only file system" in output:
            writable = (
                "only /tmp" if policy.mode is SandboxMode.READ_ONLY else "the workspace and /tmp"
            )
            hints.append(f"note: the {policy.mode.value} sandbox lets commands write {writable}.")
        if failed and not policy.network and _NO_NETWORK_SIGNS.search(output):
            hints.append(
                "note: the sandbox gives commands no network, and each command its own loopback "
                "(a background server is reachable only from within its own command)."
            )
        return hints


async def plan_command(
    policy: SandboxPolicy, root: Path, readable: list[Path], command: str, *, leftover_note: str
) -> CommandPlan:
    """How to run a shell command as the policy says; a ToolError when the policy refuses to run it.

    `leftover_note` is printed (to stderr) by a jailed command that left background processes.
    """
    shell = shutil.which("bash") or "/bin/sh"
    plain = [shell, "-c", command]
    if policy.mode is SandboxMode.FULL_ACCESS:
        return CommandPlan(plain, command_environment(policy, os.environ, jailed=False), False)
    bwrap = shutil.which("bwrap")
    problem = await bwrap_problem(bwrap)
    if problem is None and bwrap is not None:
        env = command_environment(policy, os.environ, jailed=True)
        wrapped = [shell, "-c", _JAILED_SHELL, shell, command, leftover_note]
        return CommandPlan(jail_argv(bwrap, policy, root, readable, wrapped), env, True)
    if policy.fallback == "refuse":
        raise ToolError(
            f"the {policy.mode.value} sandbox is unavailable ({problem}) and the sandbox policy "
            "refuses to run commands without it; install bubblewrap (apt-get install bubblewrap) "
            "or set the sandbox mode to full-access"
        )
    warning = (
        f"warning: {problem}, so commands run WITHOUT the {policy.mode.value} sandbox "
        "(install bubblewrap to confine them)"
    )
    env = command_environment(policy, os.environ, jailed=False)
    return CommandPlan(plain, env, False, warning)
