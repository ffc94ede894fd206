"""`keel sandbox`: which protections hold for run_command on this machine, seen from inside a real command.

A probe runs through the real run_command tool, in a throwaway workspace under the configured
sandbox policy, and reports what the kernel shows it: namespaces, no_new_privs, seccomp,
capabilities, whether sysctls can be opened for writing, whether a UDP socket can be made, and
whether the mount holding / is read-only (else, as owner, a command can chmod or touch files there).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel

from keel.agent.core.api.sandbox import SandboxPolicy, sandbox_mechanism
from keel.agent.core.api.tools import RunCommandArgs, RunCommandTool, ToolContext
from keel.agent.core.errors import ExitCode

NAMESPACES = ("user", "pid", "uts", "ipc", "net", "mnt")

# Runs inside the sandbox (python -I -S): prints one JSON object of what this process can see and do.
_PROBE = """\
import json, os, socket, sys
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
facts = {name: status[name].strip() for name in ("NoNewPrivs", "Seccomp", "CapEff", "CapBnd")}
facts["namespaces"] = [n for n, outside in zip(sys.argv[2::2], sys.argv[3::2])
                       if os.readlink(f"/proc/self/ns/{n}") != outside]
try:
    open("/proc/sys/kernel/core_pattern", "a").close()  # opened for writing, nothing written
    facts["sysctl"] = "writable"
except OSError as exc:
    facts["sysctl"] = os.strerror(exc.errno)
facts["root_mount"] = "read-only" if os.statvfs("/").f_flag & os.ST_RDONLY else "writable"
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
    facts["udp"] = "allowed"
except OSError as exc:
    facts["udp"] = os.strerror(exc.errno)
print(sys.argv[1] + json.dumps(facts))
"""
_MARK = "keel-sandbox-probe:"


class ProbeFacts(BaseModel):
    """What the probe saw from inside a command."""

    NoNewPrivs: str
    Seccomp: str
    CapEff: str
    CapBnd: str
    namespaces: list[str]
    sysctl: str
    udp: str
    root_mount: str


def add_sandbox_parser(commands: Any) -> None:
    commands.add_parser("sandbox", help="show which protections confine commands on this machine")


async def probe(policy: SandboxPolicy) -> tuple[ProbeFacts | None, str]:
    """Run the probe under `policy` in a temporary workspace: its facts, or None and the raw output."""
    outside = [part for name in NAMESPACES for part in (name, os.readlink(f"/proc/self/ns/{name}"))]
    argv = [sys.executable, "-I", "-S", "-c", _PROBE, _MARK, *outside]
    with tempfile.TemporaryDirectory(prefix="keel-sandbox-") as temp:
        (Path(temp) / "ws").mkdir()
        ctx = ToolContext(root=Path(temp) / "ws", scratch=Path(temp) / "scratch", sandbox=policy)
        try:
            command = " ".join(_quote(arg) for arg in argv)
            result = await RunCommandTool().run(RunCommandArgs(command=command, timeout=30), ctx)
        finally:
            await ctx.aclose()
    for line in result.output.splitlines():
        if line.startswith(_MARK):
            return ProbeFacts.model_validate(json.loads(line[len(_MARK) :])), result.output
    return None, result.output


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


def describe(policy: SandboxPolicy, facts: ProbeFacts) -> list[str]:
    """The report's lines, one protection each."""
    caps = int(facts.CapEff, 16) | int(facts.CapBnd, 16)
    spaces = facts.namespaces
    network = "allowed by the policy"
    if not policy.network:
        network = "own namespace (loopback only)" if "net" in spaces else "host network"
        network += f"; UDP sockets: {facts.udp.lower()}"
    lines = {
        "user namespace": "yes" if "user" in spaces else "no",
        "other namespaces": ", ".join(n for n in spaces if n != "user") or "none",
        "no_new_privs": "yes" if facts.NoNewPrivs == "1" else "no",
        "seccomp": "filter" if facts.Seccomp == "2" else "none",
        "capabilities": "none" if caps == 0 else f"SOME LEFT (effective|bounding {caps:#x})",
        "/proc/sys": "WRITABLE" if facts.sysctl == "writable" else facts.sysctl.lower(),
        "/ mount": (
            "read-only" if facts.root_mount == "read-only" else "writable (file modes and times)"
        ),
        "network": network,
    }
    return [_line(name, value) for name, value in lines.items()]


def _line(name: str, value: str) -> str:
    return f"{name + ':':<18}{value}"


def sandbox_command(policy: SandboxPolicy, out: TextIO) -> int:
    """Print the mechanism and, when it confines, what the probe found inside it."""
    mechanism = sandbox_mechanism(policy)
    print(_line("mechanism", f"{mechanism.description} ({policy.mode.value})"), file=out)
    if not mechanism.confines:
        return int(ExitCode.OK)
    facts, output = asyncio.run(probe(policy))
    if facts is None:
        print(f"the probe command failed:\n{output}", file=out)
        return int(ExitCode.FAILURE)
    for line in describe(policy, facts):
        print(line, file=out)
    return int(ExitCode.OK)
