"""Which processes a test's commands left running: the ones whose working directory is in its workspace."""

from __future__ import annotations

import os
from pathlib import Path


def processes_in(directory: Path) -> list[int]:
    """Live processes whose working directory is inside `directory` (every command starts there)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry.name}/cwd")
            state = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (cwd == str(directory) or cwd.startswith(f"{directory}/")):
            found.append(int(entry.name))
    return found
