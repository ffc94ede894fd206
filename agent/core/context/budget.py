"""The per-task token budget: the status line the model sees each turn, and the automatic estimate."""

from __future__ import annotations

import math
from pathlib import Path

from keel.agent.core.workspace_facts import git_dir_of
from keel.prompts import render

CONVERGE_AT = 0.80
WRAP_UP_AT = 0.95
AUTO_MIN, AUTO_BASE, AUTO_MAX = 60_000, 100_000, 2_000_000


def budget_note(used: int, budget: int | None, context: int) -> str:
    """Converge at 80%, wrap up at 95% or when this call will likely be the last the budget allows."""
    if not budget:
        return ""
    percent = int(100 * used / budget)
    if used >= WRAP_UP_AT * budget or used + 2 * context >= budget:
        return render("budget_wrap_up", percent=percent)
    if used >= CONVERGE_AT * budget:
        return render("budget_converge", percent=percent)
    return ""


STATUS_MARK = "[keel status]"  # how prompts/status.j2 begins


def is_status_line(text: str) -> bool:
    """Whether a message is a status line keel wrote (kept in the history with append-only prompts)."""
    return text.startswith(STATUS_MARK)


def status_line(used: int, budget: int | None, context: int, window: int, note: str) -> str:
    """What the model reads at the end of every request: spend, budget, context fill, and the note if any."""
    percent = int(100 * used / budget) if budget else 0
    return render(
        "status",
        used=used,
        budget=budget,
        percent=percent,
        context=context,
        window=window,
        note=note,
    )


def count_repo_files(root: Path) -> int:
    """Files git tracks in the repository holding `root`: the entry count in its index's header
    (no process, no walk); 0 outside a repository or when the index cannot be read."""
    git_dir = git_dir_of(root)
    if git_dir is None:
        return 0
    try:
        with open(git_dir / "index", "rb") as file:
            header = file.read(12)
    except OSError:
        return 0
    if len(header) < 12 or header[:4] != b"DIRC":
        return 0
    return int.from_bytes(header[8:12], "big")


def auto_budget(prompt: str, repo_files: int) -> int:
    """A budget from the task's size: grows with the prompt and the repo, but sub-linearly (see README)."""
    words = len(prompt.split())
    difficulty = 1.0 + 0.5 * math.log2(1 + words / 20) + 0.25 * math.log10(1 + repo_files)
    budget = AUTO_BASE * difficulty**2
    return int(min(AUTO_MAX, max(AUTO_MIN, round(budget, -3))))
