"""`keel sandbox` says which protections hold for commands on this machine, as a command inside sees them."""

from __future__ import annotations

from pathlib import Path

from keel_cli import run_keel
from sec_jail_support import jail

__all__ = ["jail"]  # the fixture, imported for pytest to find


def report(tmp_path: Path, *flags: str) -> dict[str, str]:
    workspace = tmp_path / "repo"
    workspace.mkdir(exist_ok=True)
    result = run_keel("sandbox", *flags, cwd=workspace, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    print(result.stdout)
    lines = [line.partition(":") for line in result.stdout.splitlines()]
    return {name.strip(): value.strip() for name, _, value in lines}


def test_keel_sandbox_names_each_protection(jail, tmp_path: Path):
    from keel.tools.exec.sandbox_mechanism import bwrap_user_namespace

    facts = report(tmp_path)
    assert facts["mechanism"].startswith(jail)
    assert facts["no_new_privs"] == "yes"
    assert facts["capabilities"] == "none"
    assert facts["/proc/sys"] in ("read-only file system", "permission denied")
    assert (
        "own namespace" in facts["network"] or "UDP sockets: permission denied" in facts["network"]
    )
    if jail == "landlock":
        assert facts["seccomp"] == "filter"
    elif bwrap_user_namespace("bwrap"):
        assert facts["user namespace"] == "yes"
        assert {"pid", "uts", "ipc", "net"} <= set(facts["other namespaces"].split(", "))
