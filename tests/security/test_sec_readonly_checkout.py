"""A checkout on a read-only file system (one without a .keel folder) stays readable by keel's commands
in both sandbox modes: keel cannot make the empty .keel it keeps read-only, says so in one line, and
runs the command (a read-only file system keeps commands from making one too)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from keel_cli import KEEL, git_repo, keel_env
from sec_jail_support import jail
from test_readonly_repo import read_only_mounts_problem

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

__all__ = ["jail"]  # the fixture, imported for pytest to find

pytestmark = pytest.mark.skipif(
    read_only_mounts_problem() is not None, reason=str(read_only_mounts_problem())
)


@pytest.mark.parametrize("mode", ["read-only", "workspace-write"])
def test_commands_read_a_read_only_checkout(jail, scripted_server, tmp_path: Path, mode: str):
    repo = git_repo(tmp_path / "repo", {"README.md": "readable text\n"})
    call = ScriptedToolCall(name="run_command", arguments={"command": "cat README.md"})
    server = scripted_server([Reply(tool_calls=[call]), Reply(text="done")])
    keel = [KEEL, "run", "--model", "openai/any", "--api-base", server.url]
    keel += ["--output-format", "stream-json", "--sandbox", mode, "read the readme"]
    quoted = shlex.quote(str(repo))
    script = f"mount --bind {quoted} {quoted} && mount -o remount,bind,ro {quoted} && exec "
    result = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script + shlex.join(keel)],
        cwd=repo, env=keel_env(tmp_path / "home"), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stdout
    outputs = [
        json.loads(line).get("output", "")
        for line in result.stdout.splitlines()
        if '"tool.finished"' in line or '"tool_result"' in line
    ]
    assert any("readable text" in output for output in outputs), result.stdout[-3000:]
    assert not (repo / ".keel").exists()
    if mode == "workspace-write":  # said once, in the first command's result
        said = [output for output in outputs if "on a read-only file system" in output]
        assert len(said) == 1, outputs
