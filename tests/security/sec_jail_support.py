"""What the confinement-as-root tests share: a `jail` fixture run once under bubblewrap and once under Landlock.

Landlock is chosen by hiding bwrap from PATH (a folder of links to everything else beside it),
as tests/test_sandbox_landlock.py does; a mechanism this machine lacks skips its half.
"""

from __future__ import annotations

import os
import shutil

import pytest
from sandbox_support import path_without_bwrap

from keel.tools.exec.sandbox import bwrap_problem
from keel.tools.exec.sandbox_mechanism import NO_LANDLOCK_ENV, probe_landlock

MECHANISMS = ["bubblewrap", "landlock"]


@pytest.fixture(params=MECHANISMS)
async def jail(request, monkeypatch, tmp_path_factory) -> str:
    """The mechanism the test's commands run under (bubblewrap or landlock); skipped when missing here."""
    if request.param == "bubblewrap":
        problem = await bwrap_problem(shutil.which("bwrap"))
        if problem:
            pytest.skip(f"no bubblewrap here: {problem}")
        return "bubblewrap"
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path_factory.mktemp("nobwrap")))
    monkeypatch.delenv(NO_LANDLOCK_ENV, raising=False)
    abi = probe_landlock()
    if isinstance(abi, str):
        pytest.skip(f"no Landlock here: {abi}")
    return "landlock"


def as_root() -> None:
    """Skip unless the test runs as root (as CI does): the escapes below are root's."""
    if os.geteuid() != 0:
        pytest.skip("this escape needs root (CI runs as root)")
