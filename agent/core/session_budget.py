"""The budget a session's task gets when nothing set one for it: a resumed task's fresh grant, a new task's
estimate. Each is a budget.set event the session emits."""

from __future__ import annotations

from pathlib import Path

from keel.agent.core.context.budget import auto_budget, count_repo_files
from keel.agent.core.protocol import BudgetSet
from keel.agent.core.settings import SessionSettings
from keel.agent.core.state import SessionState


def resume_budget(settings: SessionSettings, state: SessionState, root: Path) -> BudgetSet:
    """A resumed task's budget: a fresh grant on top of what it used."""
    grant = resume_grant(settings, state, root)
    budget = None if grant is None else state.task_tokens + grant
    default = settings.budget if settings.budget is not None else state.default_budget
    return BudgetSet(budget=budget, default_budget=default, reason="resume")


def resume_grant(settings: SessionSettings, state: SessionState, root: Path) -> int | None:
    """As much as a new run would get: --budget (or the config's), the session's /budget, an estimate."""
    if settings.budget is not None:
        return settings.budget
    if state.default_budget is not None:
        return state.default_budget
    if not settings.auto_budget or not state.task_prompt:
        return None
    return auto_budget(state.task_prompt, count_repo_files(root))


def estimated_budget(
    settings: SessionSettings, state: SessionState, prompt: str, root: Path
) -> BudgetSet | None:
    """A task with no budget set (flag, config, /budget) gets the estimate from the task."""
    if state.default_budget is not None or not settings.auto_budget:
        return None
    files = count_repo_files(root)  # reads the index header: no thread or process needed
    return BudgetSet(budget=auto_budget(prompt, files), reason="estimate")
