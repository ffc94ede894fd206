"""keel's API key stays out of reach of its commands: /proc/<keel>/environ is unreadable, and an encoded key is masked.

The commands run through the real `keel run` (and, once, as an unprivileged user too), under
bubblewrap and under Landlock; the key is a canary in keel's environment.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from keel_cli import KEEL, git_repo, keel_env, run_keel
from sandbox_support import make_ctx, run_in
from sec_jail_support import jail, path_without_bwrap

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall
from keel.tools.exec.sandbox_mechanism import NO_LANDLOCK_ENV

__all__ = ["jail"]  # the fixture, imported for pytest to find

# every process's environment the command can read: kept in a file, and printed in base64
DUMP_ENVIRONS = (
    "for p in /proc/[0-9]*; do cat $p/environ; done 2>/dev/null > environs.bin; "
    "base64 -w0 environs.bin; echo"
)


def canary() -> str:
    return "sk-proj-" + secrets.token_hex(20)


def leaks(key: str, text: str) -> int:
    """How often the key is in `text`: as it is, or in any run of base64 or hex that decodes to it."""
    found = text.count(key)
    for run in re.findall(r"[A-Za-z0-9+/_-]{16,}", text):
        for skip in range(4):  # the run may start anywhere in a base64 quantum
            piece = run[skip:]
            piece = piece[: len(piece) // 4 * 4]
            try:
                decoded = base64.b64decode(piece.replace("-", "+").replace("_", "/"))
            except binascii.Error:
                continue
            found += key.encode() in decoded
    for run in re.findall(r"[0-9a-fA-F]{16,}", text):
        for skip in range(2):
            piece = run[skip:]
            found += key.encode() in bytes.fromhex(piece[: len(piece) // 2 * 2])
    return found


def script(command: str) -> list[Reply]:
    call = ScriptedToolCall(name="run_command", arguments={"command": command})
    return [Reply(tool_calls=[call]), Reply(text="done")]


async def test_the_environment_of_keels_process_is_unreadable(jail, tmp_path: Path):
    ctx = make_ctx(tmp_path)
    try:
        await run_in(ctx, f"cat /proc/{os.getpid()}/environ > environ.bin; echo done")
    finally:
        await ctx.aclose()
    assert b"PATH=" not in (tmp_path / "ws" / "environ.bin").read_bytes()


def test_keel_run_commands_cannot_read_the_api_key(jail, scripted_server, tmp_path: Path):
    key = canary()
    server = scripted_server(script(DUMP_ENVIRONS))
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"
    result = run_keel(
        "run", "--model", "openai/any", "--api-base", server.url, "look around",
        cwd=repo, home=home, OPENAI_API_KEY=key,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    logs = "".join(path.read_text() for path in (home / "sessions").glob("*.jsonl"))
    requests = "".join(json.dumps(request.body) for request in server.requests)
    assert len(server.requests) == 2
    assert leaks(key, logs) == 0 and leaks(key, requests) == 0
    assert key.encode() not in (repo / "environs.bin").read_bytes()
    assert key.encode() not in (repo / "environs.bin").read_bytes()


def test_base64_and_hex_of_a_key_are_masked(scripted_server, tmp_path: Path):
    key = canary()
    dump = 'base64 -w0 .env; echo; od -An -tx1 .env | tr -d " \\n"; echo'
    server = scripted_server(script(dump))
    repo = git_repo(tmp_path / "repo", {".env": f"OPENAI_API_KEY={key}\n"})
    home = tmp_path / "home"
    result = run_keel(
        "run", "--model", "openai/any", "--api-base", server.url, "read the env file",
        cwd=repo, home=home, OPENAI_API_KEY=key,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    logs = "".join(path.read_text() for path in (home / "sessions").glob("*.jsonl"))
    requests = "".join(json.dumps(request.body) for request in server.requests)
    encoded = base64.b64encode(f"OPENAI_API_KEY={key}\n".encode()).decode()
    assert encoded[:8] in requests  # the command really printed the encoding around the key
    assert leaks(key, logs) == 0 and leaks(key, requests) == 0
    assert "[REDACTED]" in requests


@pytest.fixture
def nobody_dir() -> Iterator[Path]:
    """A folder the unprivileged user `nobody` owns, outside pytest's root-only temp folders."""
    if os.geteuid() != 0:
        pytest.skip("dropping to another user needs root")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    user = pwd.getpwnam("nobody")
    path = Path(tempfile.mkdtemp(prefix="keel-nobody-"))
    os.chmod(path, 0o755)
    os.chown(path, user.pw_uid, user.pw_gid)
    yield path
    shutil.rmtree(path, ignore_errors=True)


# (not Landlock: its wrapper runs keel's interpreter, which may live where nobody cannot reach it)
@pytest.mark.parametrize("mechanism", ["bubblewrap", "none"])
def test_an_unprivileged_keel_hides_its_key_too(mechanism, scripted_server, nobody_dir: Path):
    """As a user without capabilities, even unsandboxed: keel's own process is not dumpable."""
    user = pwd.getpwnam("nobody")
    key = canary()
    server = scripted_server(script(DUMP_ENVIRONS))
    repo = nobody_dir / "repo"
    git_repo(repo, {"a.txt": "a\n"})
    home = nobody_dir / "home"
    home.mkdir()
    for path in [repo, *repo.rglob("*"), home]:
        os.lchown(path, user.pw_uid, user.pw_gid)
    env = keel_env(home, OPENAI_API_KEY=key, HOME=str(home))
    if mechanism == "none":
        env["PATH"] = path_without_bwrap(nobody_dir / "farm")
        env[NO_LANDLOCK_ENV] = "1"
    drop = ["setpriv", "--reuid", str(user.pw_uid), "--regid", str(user.pw_gid), "--clear-groups"]
    argv = [*drop, KEEL, "run", "--model", "openai/any", "--api-base", server.url, "look"]
    done = subprocess.run(
        argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    logs = "".join(path.read_text() for path in (home / "sessions").glob("*.jsonl"))
    requests = "".join(json.dumps(request.body) for request in server.requests)
    assert len(server.requests) == 2
    assert leaks(key, logs) == 0 and leaks(key, requests) == 0
    assert key.encode() not in (repo / "environs.bin").read_bytes()
