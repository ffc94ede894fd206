"""run_command and job_output: exit codes, merged and capped output, timeouts, interrupts, background jobs."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from process_support import processes_in

from keel.tools.base import ToolContext, ToolError
from keel.tools.exec.output_capture import OutputCapture, clean_terminal_text, render_head_tail
from keel.tools.exec.sandbox import SandboxMode, SandboxPolicy
from keel.tools.job_output import JobOutputArgs, JobOutputTool
from keel.tools.registry import ToolRegistry
from keel.tools.run_command import RunCommandArgs, RunCommandTool

PY = sys.executable


@pytest.fixture
async def ctx(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    context = ToolContext(
        root=workspace,
        scratch=tmp_path / "scratch",
        sandbox=SandboxPolicy(mode=SandboxMode.FULL_ACCESS),
    )
    yield context
    await context.aclose()
    assert processes_in(context.root) == []


async def run(ctx: ToolContext, command: str, **kwargs) -> tuple[str, bool]:
    registry = ToolRegistry([RunCommandTool(), JobOutputTool()])
    tool, args = registry.validate("run_command", {"command": command, **kwargs})
    result = await registry.run(tool, args, ctx)
    return result.output, result.ok


async def job_output(ctx: ToolContext, job_id: str, stop: bool = False) -> str:
    result = await JobOutputTool().run(JobOutputArgs(job_id=job_id, stop=stop), ctx)
    return result.output


def test_clean_terminal_text_strips_escapes_and_keeps_the_last_redraw():
    raw = "\x1b[1;31mError\x1b[0m: x\n 10%\r 50%\r100%\nb\x08bold\n\x1b]0;title\x07done\r\n"
    assert clean_terminal_text(raw) == "Error: x\n100%\nbold\ndone\n"


def test_long_output_shows_head_and_tail_within_10_kib_and_counts_omitted_lines():
    text = "".join(f"line {n}\n" for n in range(5000)).encode()
    shown, truncated = render_head_tail(text, None, total_bytes=len(text), total_lines=5000)
    assert truncated and len(shown.encode()) <= 10 * 1024
    assert shown.startswith("line 0\n") and shown.endswith("line 4999\n")
    kept = shown.count("line ")
    assert f"{5000 - kept:,} lines omitted" in shown


def test_capture_memory_is_bounded_and_the_file_is_capped(tmp_path: Path):
    capture = OutputCapture(tmp_path / "out.log", file_cap=1_000_000)
    for n in range(2000):
        capture.feed(f"{n:08d}".encode() * 1000)  # 8 KB a chunk, 16 MB in all
    capture.close()
    assert capture.total_bytes == 16_000_000
    assert len(capture._head) + len(capture._tail) <= 128 * 1024
    assert (tmp_path / "out.log").stat().st_size == 1_000_000
    shown, truncated = capture.render()
    assert truncated and "00001999" in shown and "its first 1,000,000 bytes" in shown


def test_reading_since_an_offset_covers_output_beyond_the_saved_file(tmp_path: Path):
    capture = OutputCapture(tmp_path / "job.log", file_cap=50_000)
    capture.feed(b"opening\n")
    assert capture.render_since(0, 0) == ("opening\n", False)
    seen = (capture.total_bytes, capture.total_lines)
    capture.feed(b"".join(b"row %d\n" % n for n in range(100_000)))
    shown, truncated = capture.render_since(*seen)
    print(shown[-300:])
    assert truncated and shown.startswith("row 0\n") and shown.endswith("row 99999\n")
    assert "opening" not in shown and len(shown.encode()) <= 10 * 1024


async def test_exit_code_and_merged_output_in_order(ctx: ToolContext):
    output, ok = await run(ctx, "echo one; echo two >&2; echo three; exit 3")
    print(output)
    assert not ok
    assert output.index("one") < output.index("two") < output.index("three")
    assert "exit code 3" in output


async def test_runs_in_the_workspace_with_non_interactive_environment(ctx: ToolContext):
    output, ok = await run(
        ctx, "pwd; echo pager=$PAGER git_pager=$GIT_PAGER editor=$GIT_EDITOR; tty"
    )
    assert str(ctx.root) in output
    assert "pager=cat git_pager=cat editor=true" in output
    assert "not a tty" in output
    assert "exit code 1" in output and not ok


async def test_long_output_is_capped_and_saved_in_full(ctx: ToolContext):
    output, ok = await run(ctx, f"{PY} -c \"[print('row', n) for n in range(100000)]\"")
    assert ok and "row 0\n" in output and "row 99999" in output and "exit code 0" in output
    assert len(output.encode()) < 11 * 1024
    saved = Path(output.split("full output is in ")[1].split(": grep it")[0])
    assert saved.read_text().count("\n") == 100000


async def test_progress_bars_collapse_to_their_final_state(ctx: ToolContext):
    script = "import sys\nfor n in range(101): sys.stdout.write(f'\\rprogress {n}%')\nprint()"
    (ctx.root / "bar.py").write_text(script)
    output, _ = await run(ctx, f"{PY} bar.py")
    assert "progress 100%" in output and "progress 50%" not in output


async def test_timeout_kills_the_group_and_shows_output_so_far(ctx: ToolContext):
    output, ok = await run(ctx, "echo started; sleep 300 & sleep 300", timeout=1)
    print(output)
    assert not ok
    assert "started" in output and "timed out after 1 s" in output and "background=true" in output
    assert processes_in(ctx.root) == []


async def test_interrupt_kills_the_group_promptly_and_reraises(ctx: ToolContext):
    task = asyncio.ensure_future(run(ctx, "sleep 300 | cat", timeout=600))
    for _ in range(100):
        if len(processes_in(ctx.root)) >= 2:
            break
        await asyncio.sleep(0.05)
    assert processes_in(ctx.root)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    print(f"interrupt to return: {time.monotonic() - cancelled_at:.2f} s")
    assert processes_in(ctx.root) == []


async def test_a_child_blocked_on_a_terminal_is_reported_as_waiting_for_input(ctx: ToolContext):
    script = (
        "import os, pty\npid, fd = pty.fork()\n"
        "if pid == 0:\n    input()\nelse:\n    os.waitpid(pid, 0)\n"
    )
    (ctx.root / "prompt.py").write_text(script)
    result = await RunCommandTool(input_wait_seconds=1.0).run(
        RunCommandArgs(command=f"{PY} prompt.py", timeout=60), ctx
    )
    print(result.output)
    assert not result.ok and "appears to be waiting for input" in result.output
    assert processes_in(ctx.root) == []


async def test_a_silent_command_that_is_not_reading_input_is_left_alone(ctx: ToolContext):
    result = await RunCommandTool(input_wait_seconds=1.0).run(
        RunCommandArgs(command="sleep 2.5; echo finished", timeout=60), ctx
    )
    assert result.ok and "finished" in result.output and "exit code 0" in result.output


async def test_background_job_is_read_incrementally_and_stopped(ctx: ToolContext):
    loop = (
        "import time\nfor n in range(1000):\n    print('tick', n, flush=True)\n    time.sleep(0.1)"
    )
    (ctx.root / "ticker.py").write_text(loop)
    output, ok = await run(ctx, f"{PY} ticker.py", background=True)
    assert ok and "started job job1" in output and "running" in output
    await asyncio.sleep(0.5)
    first = await job_output(ctx, "job1")
    await asyncio.sleep(0.5)
    second = await job_output(ctx, "job1")
    assert "tick" in first and "tick" in second
    last_seen = int(first.rsplit("tick ", 1)[1].split()[0])
    assert f"tick {last_seen}\n" not in second and f"tick {last_seen + 1}" in second
    stopped = await job_output(ctx, "job1", stop=True)
    print(stopped)
    assert "stopped" in stopped and processes_in(ctx.root) == []


async def test_session_close_ends_background_jobs(ctx: ToolContext):
    await run(ctx, "sleep 300", background=True)
    await run(ctx, "sleep 301 & sleep 302", background=True)
    assert len(processes_in(ctx.root)) >= 3
    await ctx.aclose()
    assert processes_in(ctx.root) == []


async def test_a_background_command_that_fails_at_once_says_so(ctx: ToolContext):
    output, _ = await run(ctx, "echo no such server >&2; exit 4", background=True)
    assert "exit code 4" in output and "no such server" in output


async def test_unknown_job_and_bad_arguments_are_errors_the_model_can_fix(ctx: ToolContext):
    registry = ToolRegistry([JobOutputTool()])
    missing = await registry.run(JobOutputTool(), JobOutputArgs(job_id="job9"), ctx)
    assert not missing.ok and "no background job" in missing.output
    await run(ctx, "true", background=True)
    result = await registry.run(JobOutputTool(), JobOutputArgs(job_id="job9"), ctx)
    assert not result.ok and "job1" in result.output
    with pytest.raises(ToolError, match="timeout"):
        await run(ctx, "true", timeout=0)
