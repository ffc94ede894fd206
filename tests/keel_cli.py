"""Run the real `keel` console script as a subprocess, the way a user or a CI job would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEEL = str(Path(sys.executable).parent / "keel")


@dataclass
class KeelResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, Any]]:
        """stdout parsed as stream-json: one event object per line."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def types(self) -> list[str]:
        return [event["type"] for event in self.events]


def keel_env(home: Path, unset: tuple[str, ...] = (), **extra: str) -> dict[str, str]:
    """An environment with keel's data under `home`, no model configured from outside, `unset` removed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEEL_") and k not in unset}
    env.update({"KEEL_HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")}, **extra)
    return env


def run_keel(
    *args: str,
    cwd: Path,
    home: Path,
    stdin: str | None = None,
    timeout: float = 120,
    unset: tuple[str, ...] = (),
    **env: str,
) -> KeelResult:
    proc = subprocess.run(
        [KEEL, *args],
        check=False,
        cwd=cwd,
        env=keel_env(home, unset, **env),
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return KeelResult(proc.returncode, proc.stdout, proc.stderr)


def git_repo(path: Path, files: dict[str, str]) -> Path:
    """A real git repository with the given files committed."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=path, check=True)
    return path


def run_streamed(api_base: str, *args: str, cwd: Path, home: Path, **kwargs: object) -> KeelResult:
    """`keel run` against a scripted server at `api_base`, with stream-json output."""
    return run_keel(
        "run",
        "--model",
        "openai/any",
        "--api-base",
        api_base,
        "--output-format",
        "stream-json",
        *args,
        cwd=cwd,
        home=home,
        **kwargs,  # type: ignore[arg-type]
    )
