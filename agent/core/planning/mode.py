"""Plan mode: which tools run while the model plans, and what a refused call tells it."""

from __future__ import annotations

from keel.prompts import render

# the read tools: they change no file and start no program
PLAN_MODE_TOOLS = ("read_file", "search", "find_files", "code_map", "todo")


def plan_mode_refusal(name: str) -> str | None:
    """Why a call may not run in plan mode (the model reads it as the call's result); None if it may."""
    if name in PLAN_MODE_TOOLS:
        return None
    return render("plan_mode_refusal", name=name, allowed=PLAN_MODE_TOOLS)
