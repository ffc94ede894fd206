"""What the peer modes of the small-model benchmark share: each peer installed on first use into a venv of
its own (they pin their own litellm), run as a subprocess in a fresh git repository of the task under the
same wall-clock timeout as keel, then the same check."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _small_model_keel import stop
from _small_model_tasks import Task, git_repo, run_check, tool_environment, write_files

PEERS_DIR = Path(
    os.environ.get("KEEL_BENCH_PEERS", Path.home() / ".cache" / "keel" / "bench" / "peers")
)
DUMMY_KEY = "sk-bench-local"  # a local server takes any key; litellm wants one for openai/ models


@dataclass(frozen=True)
class Peer:
    """A peer tool as PyPI ships it: its distribution, the pinned version, and its executable."""

    package: str
    version: str
    executable: str

    def venv(self, root: Path = PEERS_DIR) -> Path:
        """The venv of its own, under the benchmark's cache."""
        return root / f"{self.package}-{self.version}"

    def binary(self, root: Path = PEERS_DIR) -> Path:
        """Its executable in that venv."""
        return self.venv(root) / "bin" / self.executable


def install_commands(peer: Peer, root: Path = PEERS_DIR) -> list[list[str]]:
    """The commands that make the peer's venv and install the pinned version into it."""
    venv = peer.venv(root)
    return [
        [sys.executable, "-m", "venv", str(venv)],
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            f"{peer.package}=={peer.version}",
        ],
    ]


def ensure_peer(peer: Peer, root: Path = PEERS_DIR) -> Path:
    """The peer's executable, installing it first when its venv does not have it (saying so)."""
    binary = peer.binary(root)
    if binary.exists():
        return binary
    print(f"installing {peer.package}=={peer.version} into {peer.venv(root)} ...", flush=True)
    for command in install_commands(peer, root):
        print(f"  $ {' '.join(command)}", flush=True)
        subprocess.run(command, check=True)
    if not binary.exists():
        raise RuntimeError(f"{peer.package} installed but {binary} is missing")
    return binary


@dataclass
class PeerRun:
    """One task through a peer: the check's verdict, its cost, how it ended, and its output for reading."""

    passed: bool
    status: str  # the peer's own exit status where it reports one, else "exit N" or "timeout"
    calls: int
    tokens: int
    seconds: float
    returncode: int | None
    output: str
    check_output: str


@dataclass
class Outcome:
    """What a peer's process left behind, read by the peer's own parser."""

    status: str
    calls: int
    tokens: int
    transcript: str = ""  # what the peer saved of its run, readable (its output has the rest)


@dataclass
class Invocation:
    """How to run a peer on one task: its argv (given the repo and a scratch folder outside it), extra
    environment, files it reads from the scratch folder (its settings), and how to read its output
    and scratch folder once it stopped."""

    command: Callable[[Path, Path], list[str]]
    env: dict[str, str]
    read: Callable[[str, Path], Outcome]
    scratch_files: dict[str, str] = field(default_factory=dict)


def peer_environment(extra: dict[str, str], home: Path) -> dict[str, str]:
    """The checks' environment (this Python first on PATH, for the agents' own commands), a home of its
    own so that no config of this user's applies, no model chosen from outside, an API key (a dummy
    one unless one is set: a local server takes any)."""
    env = tool_environment({"HOME": str(home)})
    env.setdefault("OPENAI_API_KEY", DUMMY_KEY)
    for name in ("KEEL_MODEL", "KEEL_API_BASE", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        env.pop(name, None)
    return env | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"} | extra


def run_peer(task: Task, invocation: Invocation, timeout: float) -> PeerRun:
    """The task in a fresh repository through the peer, stopped at the timeout, then checked."""
    with tempfile.TemporaryDirectory(prefix=f"keel-peer-{task.name}-") as folder:
        repo = git_repo(Path(folder) / "repo", task.files)
        scratch = Path(folder) / "scratch"
        (scratch / "home").mkdir(parents=True)
        write_files(scratch, invocation.scratch_files)
        log = scratch / "output.txt"
        started = time.perf_counter()
        with log.open("wb") as output:
            process = subprocess.Popen(
                invocation.command(repo, scratch),
                cwd=repo,
                env=peer_environment(invocation.env, scratch / "home"),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so a timeout stops all of it
            )
            try:
                process.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
                stop(process)
        seconds = time.perf_counter() - started
        text = log.read_text(errors="replace")
        outcome = invocation.read(text, scratch)
        check = run_check(task, repo)
    return PeerRun(
        passed=check.passed,
        status="timeout" if timed_out else outcome.status,
        calls=outcome.calls,
        tokens=outcome.tokens,
        seconds=seconds,
        returncode=process.returncode,
        output=f"{text}\n\n# transcript\n\n{outcome.transcript}" if outcome.transcript else text,
        check_output=check.output,
    )
