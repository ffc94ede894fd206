"""run_command without bubblewrap: Landlock confines writes and TCP, background jobs too, and keel says so.

Every test hides bwrap itself (CI installs it) by putting on PATH, in place of each folder that
holds it, a folder of links to everything else there.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from keel_cli import git_repo, run_keel
from sandbox_support import make_ctx, run_in, serve_greetings
from sandbox_support import path_without_bwrap as bwrap_free_path

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall
from keel.tools.base import ToolContext
from keel.tools.exec.landlock_plan import may_make_mount_namespace
from keel.tools.exec.sandbox_mechanism import (
    NO_LANDLOCK_ENV,
    MechanismKind,
    probe_landlock,
    sandbox_mechanism,
)
from keel.tools.exec.sandbox_policy import SandboxMode, SandboxPolicy
from keel.tools.job_output import JobOutputArgs, JobOutputTool
from keel.tools.run_command import RunCommandArgs, RunCommandTool

PY = sys.executable
# a write outside: Landlock refuses it, or (as root) the read-only view of every other mount
DENIED = re.compile("Permission denied|Read-only file system")


@pytest.fixture(scope="session")
def path_without_bwrap(tmp_path_factory) -> str:
    """PATH as it is, with every folder that holds bwrap replaced by links to its other programs."""
    return bwrap_free_path(tmp_path_factory.mktemp("farm"))


@pytest.fixture
def landlock_abi(path_without_bwrap: str, monkeypatch) -> int:
    """bwrap hidden, and the Landlock ABI of this kernel (the test is skipped without Landlock)."""
    monkeypatch.setenv("PATH", path_without_bwrap)
    monkeypatch.delenv(NO_LANDLOCK_ENV, raising=False)
    abi = probe_landlock()
    if isinstance(abi, str):
        pytest.skip(f"no Landlock here: {abi}")
    return abi


@pytest.fixture
def outside(tmp_path: Path):
    """A file in the real /tmp, outside the workspace, that no test command may create."""
    path = Path("/tmp") / f"keel-outside-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


async def test_a_write_to_the_real_tmp_is_denied_and_the_workspace_write_works(
    landlock_abi, tmp_path: Path, outside: Path
):
    ctx = make_ctx(tmp_path)
    (ctx.root / "sub").mkdir()  # no new entries at the top: .git and .keel could be among them
    first = await run_in(
        ctx,
        f"echo in > sub/inside.txt; echo x > {outside}; echo t > $TMPDIR/t && cat $TMPDIR/t; "
        "echo top > top.txt",
    )
    mechanism = sandbox_mechanism(ctx.sandbox)
    print(f"\nmechanism: {mechanism}; /tmp write blocked: {not outside.exists()}")
    assert not outside.exists() and DENIED.search(first), first
    assert (ctx.root / "sub/inside.txt").read_text() == "in\n"
    if may_make_mount_namespace():  # .git and .keel bound read-only: the rest is the command's
        assert (ctx.root / "top.txt").exists() and "create those with write_file" not in first
    else:
        assert not (ctx.root / "top.txt").exists() and "create those with write_file" in first
    assert mechanism.kind is MechanismKind.LANDLOCK and mechanism.landlock_abi == landlock_abi
    assert f"commands run under landlock (ABI {landlock_abi}" in first  # named once, first time
    assert "\nt\n" in f"\n{first}"  # the private temp dir ($TMPDIR) is writable
    second = await run_in(ctx, "echo again")
    temp_dir = ctx.jobs.temp_dir()
    await ctx.aclose()
    assert "landlock" not in second
    assert not temp_dir.exists()  # removed with the session


async def test_read_only_mode_allows_only_the_temp_dir_and_dev(
    landlock_abi, tmp_path: Path, outside: Path
):
    ctx = make_ctx(tmp_path, mode=SandboxMode.READ_ONLY)
    (ctx.root / "kept.txt").write_text("original\n")
    output = await run_in(
        ctx,
        f"cat kept.txt; echo changed > kept.txt; echo x > {outside}; "
        "echo scratch > $TMPDIR/x && cat $TMPDIR/x; echo quiet > /dev/null && echo dev-ok",
    )
    await ctx.aclose()
    print(f"\n{output}")
    assert (ctx.root / "kept.txt").read_text() == "original\n" and not outside.exists()
    assert "original" in output and "scratch" in output and "dev-ok" in output
    assert "lets commands write only $TMPDIR" in output


@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
async def test_tcp_to_loopback_follows_the_network_setting(landlock_abi, tmp_path: Path, network):
    if landlock_abi < 4:
        pytest.skip(f"Landlock ABI {landlock_abi} has no TCP rules (they need ABI 4)")
    connections: list[int] = []
    server = await serve_greetings(connections)
    port = server.sockets[0].getsockname()[1]
    client = (
        f"import socket; s = socket.create_connection(('127.0.0.1', {port}), timeout=5); "
        "print(s.recv(100).decode())"
    )
    ctx = make_ctx(tmp_path, network=network)
    try:
        output = await run_in(ctx, f'{PY} -c "{client}"')
    finally:
        server.close()
        await ctx.aclose()
    reached = "hello from the host" in output
    description = sandbox_mechanism(ctx.sandbox).description
    print(f"\n{description}: loopback connection {'made' if reached else 'refused'}")
    assert reached == network and bool(connections) == network
    assert ("TCP denied" in description) != network
    if not network:
        assert "PermissionError" in output and "denies every TCP connection" in output


async def test_background_jobs_are_confined_too(landlock_abi, tmp_path: Path, outside: Path):
    ctx = make_ctx(tmp_path)
    (ctx.root / "sub").mkdir()
    started = await RunCommandTool().run(
        RunCommandArgs(
            command=f"echo x > {outside}; echo in > sub/bg.txt; exec sleep 60", background=True
        ),
        ctx,
    )
    for _ in range(200):
        if (ctx.root / "sub/bg.txt").exists():
            break
        await asyncio.sleep(0.05)
    stopped = await JobOutputTool().run(JobOutputArgs(job_id="job1", stop=True), ctx)
    await ctx.aclose()
    print(f"\n{started.output}\n{stopped.output}")
    assert (ctx.root / "sub/bg.txt").read_text() == "in\n"
    assert not outside.exists()
    assert DENIED.search(started.output + stopped.output)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


COMMIT = "git add -A && git -c user.name=t -c user.email=t@example.com commit -q -m"


async def test_git_metadata_and_keel_config_stay_read_only_and_other_writes_work(
    landlock_abi, tmp_path: Path
):
    main = git_repo(tmp_path / "main", {"a.txt": "a\n", "sub/s.txt": "s\n", ".keel/keep": "k\n"})
    in_main = ToolContext(root=main, scratch=tmp_path / "scratch-main", sandbox=SandboxPolicy())
    output = await run_in(
        in_main,
        "echo b >> a.txt; echo t > sub/t.txt; echo x > .keel/config.toml; "
        f"echo '[alias] pwned = x' >> .git/config; echo hi > .git/hooks/pre-commit; {COMMIT} m",
    )
    await in_main.aclose()
    print(f"\n{output}")
    assert (main / "a.txt").read_text() == "a\nb\n" and (main / "sub/t.txt").exists()
    assert not (main / ".keel/config.toml").exists()
    assert not (main / ".git/hooks/pre-commit").exists()
    assert "pwned" not in (main / ".git/config").read_text()
    assert git(main, "log", "--oneline").count("\n") == 1
    git(main, "worktree", "add", "-q", str(tmp_path / "ws"), "-b", "agent")
    ctx = make_ctx(tmp_path)
    output = await run_in(
        ctx,
        f"echo c > c.txt; echo d >> a.txt; {COMMIT} in-worktree && echo committed; "
        f"echo 'echo pwned' > {main}/.git/hooks/post-checkout; "
        f"echo '[alias] pwned = x' >> {main}/.git/config; echo 'gitdir: /x' > .git",
    )
    await ctx.aclose()
    print(f"\n{output}")
    assert "committed" not in output and (ctx.root / "a.txt").read_text() == "a\nd\n"
    assert not (main / ".git/hooks/post-checkout").exists()
    assert "pwned" not in (main / ".git/config").read_text()
    assert (ctx.root / ".git").read_text().startswith("gitdir: ") and "/x" not in (
        ctx.root / ".git"
    ).read_text()


async def test_without_bubblewrap_or_landlock_the_fallback_applies(
    path_without_bwrap: str, tmp_path: Path, monkeypatch
):
    monkeypatch.setenv("PATH", path_without_bwrap)
    monkeypatch.setenv(NO_LANDLOCK_ENV, "1")
    unsandboxed = sandbox_mechanism(SandboxPolicy())
    refused = sandbox_mechanism(SandboxPolicy(fallback="refuse"))
    off = sandbox_mechanism(SandboxPolicy(mode=SandboxMode.FULL_ACCESS))
    print(f"\n{unsandboxed}\n{refused}\n{off}")
    assert unsandboxed.kind is MechanismKind.UNSANDBOXED
    assert unsandboxed.description.startswith("none (unsandboxed: bubblewrap (bwrap) is not")
    assert NO_LANDLOCK_ENV in unsandboxed.description
    assert refused.kind is MechanismKind.REFUSED and off.description == "off (full-access)"


def test_keel_run_names_the_mechanism_and_confines_run_command(
    landlock_abi, scripted_server, tmp_path: Path, outside: Path
):
    command = f"echo x > {outside}; echo in > src/inside.txt"
    server = scripted_server(
        [
            Reply(
                tool_calls=[ScriptedToolCall(name="run_command", arguments={"command": command})]
            ),
            Reply(text="done"),
        ]
    )
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n", "src/b.txt": "b\n"})
    home = tmp_path / "home"
    result = run_keel(
        "run", "--model", "openai/any", "--api-base", server.url, "do it", cwd=repo, home=home
    )
    print(f"\n{result.stderr}")
    assert result.returncode == 0, result.stderr
    assert f"keel: sandbox: landlock (ABI {landlock_abi}: writes confined" in result.stderr
    assert (repo / "src/inside.txt").exists() and not outside.exists()
    log = next((home / "sessions").glob("*.jsonl")).read_text().splitlines()[0]
    assert f'"sandbox":"landlock (ABI {landlock_abi}' in log


# Runs one command as run_command would in a workspace given as argv[1]; prints its output.
COMMAND_IN_WORKSPACE = """
import asyncio, sys
from pathlib import Path
from keel.tools.base import ToolContext
from keel.tools.run_command import RunCommandArgs, RunCommandTool
root = Path(sys.argv[1])
ctx = ToolContext(root=root, scratch=root.parent / "scratch")
result = asyncio.run(RunCommandTool().run(RunCommandArgs(command=sys.argv[2]), ctx))
print(result.output)
"""


@pytest.mark.parametrize("sys_admin", [True, False], ids=["mount-namespace", "entry-by-entry"])
def test_git_and_keel_stay_read_only_with_and_without_a_mount_namespace(
    landlock_abi, tmp_path: Path, sys_admin: bool
):
    """With CAP_SYS_ADMIN (root) .git and .keel are bound read-only and new top-level entries work;
    without it (here: root without that capability) the workspace is granted entry by entry."""
    if not may_make_mount_namespace():
        pytest.skip("keel's process lacks CAP_SYS_ADMIN: only the entry-by-entry grant exists here")
    root = git_repo(tmp_path / "ws", {"a.txt": "a\n"})
    attack = (
        "echo '[core]' >> .git/config; echo hooked > .git/hooks/pre-commit; "
        "echo 'approval = \"full-auto\"' > .keel/config.toml; echo top > top.txt; "
        "echo changed > a.txt; true"
    )
    drop = [] if sys_admin else ["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin"]
    config_before = (root / ".git/config").read_text()
    done = subprocess.run(
        [*drop, PY, "-c", COMMAND_IN_WORKSPACE, str(root), attack],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
    assert done.returncode == 0, done.stderr
    assert (root / ".git/config").read_text() == config_before
    assert not (root / ".git/hooks/pre-commit").exists()
    assert not (root / ".keel/config.toml").exists()
    assert (root / "a.txt").read_text() == "changed\n"
    assert (root / "top.txt").exists() is sys_admin, done.stdout
