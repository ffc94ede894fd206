"""Nothing a command starts outlives it, or keel: not a `setsid` child, not a background job when keel dies."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from sandbox_support import make_ctx, run_in
from sec_jail_support import jail

__all__ = ["jail"]  # the fixture, imported for pytest to find

LATE = "sleep 2; echo late > {target}"


async def test_a_setsid_child_ends_with_its_command(jail, tmp_path: Path):
    ctx = make_ctx(tmp_path)
    target = tmp_path / "ws" / "late.txt"
    detached = LATE.format(target=target)
    try:
        output = await run_in(
            ctx, f"setsid sh -c '{detached}' </dev/null >/dev/null 2>&1 & echo started"
        )
    finally:
        await ctx.aclose()
    assert "started" in output
    await asyncio.sleep(3)
    assert not target.exists(), "a setsid child kept writing in the workspace after its command"


# keel, reduced to a process that starts one background command through run_command and waits
_KEEL_STANDIN = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from sandbox_support import make_ctx
    from keel.tools.run_command import RunCommandArgs, RunCommandTool

    async def main():
        ctx = make_ctx(Path(sys.argv[1]))
        result = await RunCommandTool().run(
            RunCommandArgs(command=sys.argv[2], background=True), ctx
        )
        print(result.output.splitlines()[0], flush=True)
        await asyncio.sleep(60)

    asyncio.run(main())
    """
)


def test_a_background_command_dies_with_keel(jail, tmp_path: Path):
    target = tmp_path / "ws" / "late.txt"
    tests_dir = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": tests_dir}
    standin = subprocess.Popen(
        [sys.executable, "-c", _KEEL_STANDIN, str(tmp_path), LATE.format(target=target)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert standin.stdout is not None
        first = standin.stdout.readline()
        assert first.startswith("started"), first
        standin.send_signal(signal.SIGKILL)  # keel dies without a chance to stop anything
        standin.wait(10)
        time.sleep(3)
    finally:
        if standin.poll() is None:
            standin.kill()
    assert not target.exists(), "a background command kept running after keel died"
