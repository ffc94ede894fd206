"""write_file while another process keeps swapping a folder of the workspace for a symbolic link to a
folder outside: no file (and no temp file) ever lands outside, whichever way each write goes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from keel.tools.base import ToolContext, ToolError
from keel.tools.write_file import WriteFileArgs, WriteFileTool

WRITES = 800

# Swaps ws/d (a real folder) and ws/link (a link to the folder outside) in one step, again and again,
# until killed: ws/d is always there, half of the time as the link.
FLIPPER = """
import ctypes, os, sys
ws, outside = sys.argv[1], sys.argv[2]
d, link = os.path.join(ws, "d").encode(), os.path.join(ws, "link").encode()
os.symlink(outside, link)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
while True:
    if libc.renameat2(AT_FDCWD, d, AT_FDCWD, link, RENAME_EXCHANGE) != 0:
        sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
"""


async def test_a_folder_swapped_for_a_link_never_sends_a_write_outside(tmp_path: Path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    outside.mkdir()
    ctx = ToolContext(root=ws, scratch=tmp_path / "scratch")
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(ws), str(outside)])  # noqa: ASYNC220
    written = refused = crashed = 0
    try:
        for n in range(WRITES):
            try:
                await WriteFileTool().run(WriteFileArgs(path=f"d/f{n}.txt", content="x\n"), ctx)
                written += 1
            except ToolError:
                refused += 1
            except OSError:  # not a message for the model: counted, and failed below
                crashed += 1
    finally:
        flipper.kill()
        flipper.wait()
    assert flipper.returncode == -9, "the flipper stopped by itself"
    landed = sorted(path.name for path in outside.iterdir())
    print(f"\n{written} written, {refused} refused, {crashed} crashed, {len(landed)} outside")
    assert landed == []
    assert crashed == 0 and written > 0 and refused > 0
