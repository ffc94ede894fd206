"""Commands that hang naive agents (pagers, prompts, editors, stray children, servers, floods) must not hang run_command.

Each case comes back without running into its timeout (run_command notices the end of input, a read from
the terminal, a child holding the output open), leaves no process behind and keeps memory bounded. Each runs
unconfined and (where bubblewrap works) in the default workspace-write sandbox.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from process_support import processes_in

from keel.tools.base import ToolContext
from keel.tools.exec.sandbox import SandboxMode, SandboxPolicy, bwrap_problem
from keel.tools.job_output import JobOutputArgs, JobOutputTool
from keel.tools.run_command import RunCommandArgs, RunCommandTool

PY = sys.executable
MODES = [SandboxMode.FULL_ACCESS, SandboxMode.WORKSPACE_WRITE]


@pytest.fixture(params=MODES, ids=lambda mode: mode.value)
async def ctx(request, tmp_path: Path):
    mode = request.param
    if mode is not SandboxMode.FULL_ACCESS and (
        problem := await bwrap_problem(shutil.which("bwrap"))
    ):
        pytest.skip(f"no sandbox here: {problem}")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    context = ToolContext(
        root=workspace, scratch=tmp_path / "scratch", sandbox=SandboxPolicy(mode=mode)
    )
    yield context
    await context.aclose()
    assert processes_in(workspace) == []


async def run_bounded(ctx: ToolContext, command: str, timeout: int) -> str:
    """Run a command, check it came back without running into its timeout and left nothing running."""
    result = await asyncio.wait_for(
        RunCommandTool().run(RunCommandArgs(command=command, timeout=timeout), ctx), timeout + 60
    )
    left = processes_in(ctx.root)
    print(f"\n[{ctx.sandbox.mode.value}] {command!r}: processes left: {len(left)}")
    print(result.output[-600:])
    assert "timed out after" not in result.output
    assert left == []
    return result.output


def make_repo_with_commits(path: Path, count: int) -> None:
    stream = []
    for n in range(count):
        message = f"commit number {n}\n".encode()
        content = f"version {n}\n".encode()
        stream.append(b"commit refs/heads/main\n")
        stream.append(f"committer T <t@example.com> {1700000000 + n} +0000\n".encode())
        stream.append(b"data %d\n%s" % (len(message), message))
        stream.append(b"M 100644 inline file.txt\ndata %d\n%s\n" % (len(content), content))
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=b"".join(stream), check=True)
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=path, check=True)
    subprocess.run(["git", "config", "core.pager", "less"], cwd=path, check=True)


async def test_git_log_does_not_wait_in_a_pager(ctx: ToolContext):
    make_repo_with_commits(ctx.root, 300)
    output = await run_bounded(ctx, "git log", timeout=30)
    assert "commit number 299" in output and "exit code 0" in output
    assert "lines omitted" in output


async def test_python_input_gets_end_of_file_and_says_so(ctx: ToolContext):
    output = await run_bounded(ctx, f'{PY} -c "input()"', timeout=30)
    assert "EOFError" in output and "tried to read input" in output


@pytest.mark.skipif(shutil.which("vi") is None, reason="no vi on this machine")
async def test_vi_is_stopped_as_waiting_for_input(ctx: ToolContext):
    output = await run_bounded(ctx, "vi x", timeout=30)
    assert "waiting for input" in output or "tried to read input" in output


async def test_a_background_child_holding_the_output_open_does_not_hang(ctx: ToolContext):
    output = await run_bounded(ctx, "sleep 600 &", timeout=10)
    assert "left processes running" in output and "exit code 0" in output


def fetch_status(url: str) -> int:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status


async def test_a_server_runs_in_the_background_until_stopped(ctx: ToolContext):
    started = await RunCommandTool().run(
        RunCommandArgs(command=f"{PY} -m http.server 0 --bind 127.0.0.1", background=True), ctx
    )
    assert "started job job1" in started.output
    seen = started.output
    for _ in range(100):
        if "Serving HTTP" in seen:
            break
        await asyncio.sleep(0.1)
        seen += (await JobOutputTool().run(JobOutputArgs(job_id="job1"), ctx)).output
    assert "Serving HTTP" in seen
    if ctx.sandbox.mode is SandboxMode.FULL_ACCESS:  # a jailed server has its own loopback
        port = seen.split(" port ")[1].split()[0]
        status = await asyncio.to_thread(fetch_status, f"http://127.0.0.1:{port}/")
        assert status == 200
    assert processes_in(ctx.root)
    stopping = time.monotonic()
    stopped = await JobOutputTool().run(JobOutputArgs(job_id="job1", stop=True), ctx)
    print(
        f"\n[{ctx.sandbox.mode.value}] server stopped in {time.monotonic() - stopping:.2f} s; "
        f"processes left: {len(processes_in(ctx.root))}"
    )
    assert "stopped" in stopped.output
    assert processes_in(ctx.root) == []


def peak_rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/self/status")


def current_rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


async def test_a_flood_of_output_keeps_memory_bounded(ctx: ToolContext):
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS to the current RSS
    before = current_rss_kib()
    output = await run_bounded(ctx, "yes | head -c 200000000", timeout=60)
    growth_mb = (peak_rss_kib() - before) / 1024
    print(f"peak RSS growth while reading 200 MB: {growth_mb:.1f} MB")
    assert "200,000,000 bytes" in output and "exit code 0" in output
    assert len(output.encode()) < 11 * 1024
    assert growth_mb < 50
