"""A repository on a read-only file system: `keel setup` and `keel batch` say so in one line and exit 2, instead
of an internal error. Root writes through `chmod a-w`, so each keel runs in a mount namespace of its own in
which the repository is bind-mounted read-only (the mount ends with the process)."""

from __future__ import annotations

import functools
import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from keel_cli import KEEL, git_repo, keel_env

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall


@functools.cache
def read_only_mounts_problem() -> str | None:
    """Why this machine cannot mount a folder read-only in a private mount namespace, or None."""
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp && ! touch /tmp/.keel-ro-probe"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return None if probe.returncode == 0 else f"cannot mount read-only here: {probe.stderr.strip()}"


pytestmark = pytest.mark.skipif(
    read_only_mounts_problem() is not None, reason=str(read_only_mounts_problem())
)


def keel_on_read_only(
    repo: Path, home: Path, *args: str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run `keel ARGS` with `repo` read-only for it alone."""
    mount = f"mount --bind {shlex.quote(str(repo))} {shlex.quote(str(repo))}"
    remount = f"mount -o remount,bind,ro {shlex.quote(str(repo))}"
    command = f"{mount} && {remount} && exec {shlex.join([KEEL, *args])}"
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", command],
        cwd=cwd, env=keel_env(home), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def one_line_read_only_error(result: subprocess.CompletedProcess[str], repo: Path) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    [line] = lines
    assert "internal error" not in line and "Traceback" not in result.stderr
    assert "Read-only file system" in line and str(repo / ".git") in line
    return line


def test_setup_on_a_read_only_repository_says_so_in_one_line(tmp_path, scripted_server):
    repo = git_repo(tmp_path / "repo", {"README.md": "read-only\n"})
    server = scripted_server(["I would look around first."])
    home = tmp_path / "home"
    flags = ["--model", "openai/any", "--api-base", server.url]
    result = keel_on_read_only(repo, home, "setup", *flags, cwd=repo)
    line = one_line_read_only_error(result, repo)
    assert line.startswith("keel: cannot write to") and "writable" in line
    assert server.requests == [], "nothing was asked of the model"
    assert not (home / "worktrees").exists() and not (home / "logs").exists()


def test_batch_on_a_read_only_repository_says_so_in_one_line(tmp_path, scripted_server):
    repo = git_repo(tmp_path / "repo", {"README.md": "read-only\n"})
    edit = {"path": "README.md", "content": "changed\n"}
    server = scripted_server(
        [Reply(tool_calls=[ScriptedToolCall(name="write_file", arguments=edit)])]
    )
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t1", "prompt": "change it", "repo": str(repo)}) + "\n")
    home, out = tmp_path / "home", tmp_path / "out"
    flags = ["--model", "openai/any", "--api-base", server.url, "--out", str(out)]
    result = keel_on_read_only(repo, home, "batch", str(tasks), *flags, cwd=tmp_path)
    line = one_line_read_only_error(result, repo)
    assert f"{tasks} line 1: cannot write to" in line
    assert server.requests == [] and not out.exists()
    assert (repo / "README.md").read_text() == "read-only\n"
