"""Root's commands cannot change the mode, group, times or extended attributes of root's own files
outside the workspace (Landlock governs writes, not attributes), and still can inside it.

Each test runs one command through the real run_command tool, under bubblewrap and under Landlock.
The file outside lives under /var/tmp: bubblewrap's /tmp is its own, where the file would be missing.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from keel_cli import run_keel
from sandbox_support import make_ctx, run_in
from sec_jail_support import as_root, jail

__all__ = ["jail"]  # the fixture, imported for pytest to find

PY = sys.executable
SET_XATTR = f"{PY} -c \"import os, sys; os.setxattr(sys.argv[1], 'user.keel', b'x')\""


@pytest.fixture
def outside() -> Iterator[Path]:
    """A root-owned file outside the workspace, seen at the same path by both mechanisms."""
    folder = Path(tempfile.mkdtemp(prefix="keel-sec-attrs-", dir="/var/tmp"))
    try:
        file = folder / "theirs.txt"
        file.write_text("theirs\n")
        os.chown(file, 0, 12345)  # root's file in another group: root may regroup it to 0 as owner
        os.chmod(file, 0o644)
        yield file
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def run(tmp_path: Path, command: str) -> str:
    ctx = make_ctx(tmp_path)
    try:
        return await run_in(ctx, command)
    finally:
        await ctx.aclose()


def attributes(path: Path) -> tuple[object, ...]:
    info = path.stat()
    try:
        xattrs: list[str] = os.listxattr(path)
    except OSError:
        xattrs = []
    return (info.st_uid, info.st_gid, info.st_mode, info.st_mtime, xattrs)


async def test_root_cannot_change_attributes_of_its_files_outside(jail, tmp_path, outside):
    as_root()
    before = attributes(outside)
    output = await run(
        tmp_path,
        f"chmod 777 {outside} && echo CHMODDED; chgrp 0 {outside} && echo CHOWNED; "
        f"touch -d 2001-02-03 {outside} && echo TOUCHED; "
        f"{SET_XATTR} {outside} && echo XATTR-SET; echo DONE",
    )
    assert "DONE" in output, output
    for sign in ("CHMODDED", "CHOWNED", "TOUCHED", "XATTR-SET"):
        assert sign not in output, output
    assert attributes(outside) == before, output


async def test_attributes_inside_the_workspace_still_change(jail, tmp_path):
    output = await run(
        tmp_path,
        "printf 'echo ran\\n' > script.sh && chmod +x script.sh && ./script.sh && "
        "touch -d 2001-02-03 script.sh && mkdir -p sub && mv script.sh sub/moved.sh && "
        'touch fresh && touch "$TMPDIR/t" && chmod +x "$TMPDIR/t" && echo ALL-OK',
    )
    assert "ran" in output and "ALL-OK" in output, output
    workspace = tmp_path / "ws"
    moved = workspace / "sub/moved.sh"
    assert os.access(moved, os.X_OK) and (workspace / "fresh").exists()
    assert moved.stat().st_mtime < 1e9 + 1e8  # 2001


def test_keel_sandbox_says_the_mounts_outside_are_read_only(jail, tmp_path):
    as_root()
    (tmp_path / "repo").mkdir()
    result = run_keel("sandbox", cwd=tmp_path / "repo", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert "/ mount:          read-only" in result.stdout, result.stdout
