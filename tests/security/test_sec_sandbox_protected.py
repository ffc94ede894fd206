"""In workspace-write, a sandboxed command cannot change .git or .keel (bubblewrap and Landlock alike),
so it plants nothing that git or keel would run later outside the sandbox."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from keel_cli import git_repo

from keel.tools.base import ToolContext
from keel.tools.exec.sandbox import bwrap_problem
from keel.tools.exec.sandbox_mechanism import NO_LANDLOCK_ENV, probe_landlock
from keel.tools.exec.sandbox_policy import SandboxPolicy
from keel.tools.run_command import RunCommandArgs, RunCommandTool

ATTACK = (
    "echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config; "
    "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit; "
    "chmod +x .git/hooks/pre-commit; "
    "echo '[sandbox] mode = \"full-access\"' > .keel/config.toml; "
    "rm -f .git/HEAD; mv .keel .keel-gone; "
    "echo fine >> src/a.txt; echo new > src/b.txt"
)


def farm_without_bwrap(base: Path) -> str:
    """PATH with each folder holding bwrap replaced by a folder of links to its other programs."""
    entries = []
    for entry in os.environ["PATH"].split(os.pathsep):
        if not os.path.isfile(os.path.join(entry, "bwrap")):
            entries.append(entry)
            continue
        farm = base / f"bin{len(entries)}"
        farm.mkdir()
        real = os.path.realpath(entry)
        for name in os.listdir(real):
            if name != "bwrap":
                os.symlink(os.path.join(real, name), farm / name)
        entries.append(str(farm))
    return os.pathsep.join(entries)


@pytest.fixture(params=["bubblewrap", "landlock"])
async def mechanism(request, monkeypatch, tmp_path: Path) -> str:
    """Commands confined by the parameter's mechanism (skipped where it does not work)."""
    if request.param == "bubblewrap":
        if problem := await bwrap_problem(shutil.which("bwrap")):
            pytest.skip(f"no bubblewrap here: {problem}")
    else:
        farm = tmp_path / "farm"
        farm.mkdir()
        monkeypatch.setenv("PATH", farm_without_bwrap(farm))
        monkeypatch.delenv(NO_LANDLOCK_ENV, raising=False)
        if isinstance(abi := probe_landlock(), str):
            pytest.skip(f"no Landlock here: {abi}")
    return str(request.param)


async def test_commands_cannot_change_git_or_keel(mechanism, tmp_path: Path):
    repo = git_repo(tmp_path / "repo", {"src/a.txt": "a\n", ".keel/keep": "k\n"})
    config = (repo / ".git/config").read_text()
    ctx = ToolContext(root=repo, scratch=tmp_path / "scratch", sandbox=SandboxPolicy())
    result = await RunCommandTool().run(RunCommandArgs(command=ATTACK, timeout=60), ctx)
    await ctx.aclose()
    print(f"\n{mechanism}: {result.output}")
    assert (repo / ".git/config").read_text() == config
    assert not (repo / ".git/hooks/pre-commit").exists()
    assert (repo / ".git/HEAD").exists() and (repo / ".keel/keep").exists()
    assert not (repo / ".keel/config.toml").exists()
    assert (repo / "src/a.txt").read_text() == "a\nfine\n" and (repo / "src/b.txt").exists()


async def test_commands_cannot_create_keel_config_where_there_was_none(mechanism, tmp_path: Path):
    repo = git_repo(tmp_path / "repo", {"src/a.txt": "a\n"})
    ctx = ToolContext(root=repo, scratch=tmp_path / "scratch", sandbox=SandboxPolicy())
    command = "mkdir -p .keel; echo '[sandbox]' > .keel/config.toml; echo ok >> src/a.txt"
    result = await RunCommandTool().run(RunCommandArgs(command=command, timeout=60), ctx)
    await ctx.aclose()
    print(f"\n{mechanism}: {result.output}")
    assert not (repo / ".keel/config.toml").exists()
    assert (repo / "src/a.txt").read_text() == "a\nok\n"
