"""The run_command sandbox: what a jailed command can write, reach and see, and what happens without bubblewrap."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from sandbox_support import make_ctx, run_in, serve_greetings

from keel.tools.base import ToolContext, ToolError
from keel.tools.exec.sandbox import SandboxMode, bwrap_problem
from keel.tools.run_command import RunCommandArgs, RunCommandTool

PY = sys.executable


@pytest.fixture
async def jail_ready():
    problem = await bwrap_problem(shutil.which("bwrap"))
    if problem:
        pytest.skip(f"no sandbox here: {problem}")


async def run(ctx: ToolContext, command: str) -> str:
    """One command, then the context closed (each test here runs one)."""
    output = await run_in(ctx, command)
    await ctx.aclose()
    return output


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repo(path: Path) -> None:
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "T")
    (path / "a.txt").write_text("a\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "first")


async def test_writes_inside_the_workspace_work_and_outside_fail(jail_ready, tmp_path: Path):
    ctx = make_ctx(tmp_path)
    outside = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        output = await run(
            ctx,
            "echo in > inside.txt; mount -o remount,bind,rw / ; "
            f"echo out > {outside}/outside.txt; echo done",
        )
        blocked = not (outside / "outside.txt").exists()
        print(
            f"\ninside write works: {(ctx.root / 'inside.txt').exists()}; outside write blocked: "
            f"{'yes' if blocked else 'no'}"
        )
        assert (ctx.root / "inside.txt").read_text() == "in\n"
        assert blocked and "Read-only file system" in output
    finally:
        shutil.rmtree(outside)


async def test_read_only_mode_blocks_workspace_writes(jail_ready, tmp_path: Path):
    ctx = make_ctx(tmp_path, mode=SandboxMode.READ_ONLY)
    (ctx.root / "kept.txt").write_text("original\n")
    output = await run(
        ctx, "cat kept.txt; echo changed > kept.txt; echo scratch > /tmp/x && cat /tmp/x"
    )
    blocked = (ctx.root / "kept.txt").read_text() == "original\n"
    print(f"\nread-only workspace write blocked: {'yes' if blocked else 'no'}")
    assert "original" in output and "scratch" in output and "Read-only file system" in output
    assert "sandbox lets commands write only /tmp" in output
    assert blocked


@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
async def test_loopback_connections_follow_the_network_setting(jail_ready, tmp_path: Path, network):
    connections: list[int] = []
    server = await serve_greetings(connections)
    port = server.sockets[0].getsockname()[1]
    client = (
        f"import socket; s = socket.create_connection(('127.0.0.1', {port}), timeout=5); "
        "print(s.recv(100).decode())"
    )
    try:
        output = await run(make_ctx(tmp_path, network=network), f'{PY} -c "{client}"')
    finally:
        server.close()
    reached = "hello from the host" in output
    print(
        f"\nnetwork {'on' if network else 'off'}: loopback connection "
        f"{'made' if reached else 'blocked'}"
    )
    assert reached == network and bool(connections) == network
    assert ("gives commands no network" in output) != network


async def test_git_metadata_stays_read_only_and_other_writes_work(jail_ready, tmp_path: Path):
    ctx = make_ctx(tmp_path)
    make_repo(ctx.root)
    output = await run(
        ctx,
        "echo 'echo pwned' > .git/hooks/pre-commit; echo '[alias] pwned = x' >> .git/config; "
        "mv .git .git-moved; echo b > b.txt && git add b.txt && git commit -q -m second; "
        "git log --oneline | wc -l",
    )
    hook_blocked = not (ctx.root / ".git/hooks/pre-commit").exists()
    print(f"\n.git/hooks write blocked: {'yes' if hook_blocked else 'no'}\n{output}")
    assert hook_blocked and "pwned" not in (ctx.root / ".git/config").read_text()
    assert (ctx.root / ".git").is_dir() and not (ctx.root / ".git-moved").exists()
    assert (ctx.root / "b.txt").read_text() == "b\n"
    assert "\n1\n" in "\n" + output  # the commit was refused: .git is read-only
    assert "git commits too are refused" in output


async def test_a_worktree_cannot_touch_its_git_metadata(jail_ready, tmp_path: Path):
    main = tmp_path / "main"
    main.mkdir()
    make_repo(main)
    git(main, "worktree", "add", "-q", str(tmp_path / "ws"), "-b", "agent")
    ctx = make_ctx(tmp_path)
    dotgit = (ctx.root / ".git").read_text()
    output = await run(
        ctx,
        "echo c > c.txt && git status --short && git add c.txt && git commit -q -m in-worktree "
        f"&& echo committed; echo 'echo pwned' > {main}/.git/hooks/post-checkout; "
        "echo 'gitdir: /tmp/elsewhere' > .git",
    )
    print(f"\n{output}")
    assert "?? c.txt" in output and "committed" not in output
    assert not (main / ".git/hooks/post-checkout").exists()
    assert (ctx.root / ".git").read_text() == dotgit


@pytest.mark.parametrize("mode", list(SandboxMode), ids=lambda mode: mode.value)
async def test_secrets_in_the_environment_never_reach_commands(
    jail_ready, tmp_path: Path, monkeypatch, mode
):
    monkeypatch.setenv("CANARY_API_KEY", "canary-5f0c1e")
    monkeypatch.setenv("CANARY_PLAIN", "plain-value")
    output = await run(make_ctx(tmp_path, mode=mode), "env")
    print(f"\n[{mode.value}] canary secret visible: {'canary-5f0c1e' in output}")
    assert "canary-5f0c1e" not in output and "CANARY_" not in output
    assert "PAGER=cat" in output and "PATH=" in output


async def test_saved_output_can_be_read_back_from_inside_the_jail(jail_ready, tmp_path: Path):
    ctx = make_ctx(tmp_path)
    flood = await RunCommandTool().run(RunCommandArgs(command="seq 1 200000"), ctx)
    saved = flood.output.split("full output is in ")[1].split(": grep it")[0]
    again = await RunCommandTool().run(RunCommandArgs(command=f"wc -l < {saved}"), ctx)
    await ctx.aclose()
    assert again.output.startswith("200000\n")


async def test_an_interrupted_jailed_command_leaves_nothing_running(jail_ready, tmp_path: Path):
    ctx = make_ctx(tmp_path)
    task = asyncio.ensure_future(
        RunCommandTool().run(RunCommandArgs(command="sleep 300 & sleep 301 | cat"), ctx)
    )
    for _ in range(100):
        if len(live_processes_in(ctx.root)) >= 4:
            break
        await asyncio.sleep(0.05)
    assert live_processes_in(ctx.root)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    left = live_processes_in(ctx.root)
    print(
        f"\ninterrupt to return: {time.monotonic() - cancelled_at:.2f} s; "
        f"processes left after interrupting a jailed command: {len(left)}"
    )
    assert left == []


def live_processes_in(directory: Path) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and os.readlink(f"/proc/{entry.name}/cwd") == str(directory):
                stat = Path(f"/proc/{entry.name}/stat").read_text()
                found += [int(entry.name)] if stat.rsplit(")", 1)[1].split()[0] != "Z" else []
        except OSError:
            continue
    return found


def _path_without_bwrap(tmp_path: Path) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "env", "cat"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    return str(bin_dir)


async def test_without_bubblewrap_the_policy_refuses(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path))
    monkeypatch.setenv("KEEL_NO_LANDLOCK", "1")  # else Landlock confines the command instead
    ctx = make_ctx(tmp_path, fallback="refuse")
    with pytest.raises(ToolError, match="bubblewrap"):
        await RunCommandTool().run(RunCommandArgs(command="echo hi"), ctx)
    assert not (ctx.root / "ran").exists()


async def test_without_bubblewrap_unsandboxed_runs_and_warns_once(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path))
    monkeypatch.setenv("KEEL_NO_LANDLOCK", "1")
    ctx = make_ctx(tmp_path, fallback="unsandboxed")
    first = await RunCommandTool().run(RunCommandArgs(command="echo hi"), ctx)
    second = await RunCommandTool().run(RunCommandArgs(command="echo hi"), ctx)
    await ctx.aclose()
    print(f"\nfirst result: {first.output!r}")
    assert "hi" in first.output and "WITHOUT the workspace-write sandbox" in first.output
    assert "hi" in second.output and "WITHOUT" not in second.output
