"""The setup session: the model explores a scratch worktree (stage 1) and proposes recipes with propose_setup,
which keel verifies (stage 2) until one is accepted or the proposals run out."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from keel.agent.core.api.git import create_worktree, delete_branch_at, remove_worktree
from keel.agent.core.api.tools import (
    ProposeSetupArgs,
    ProposeSetupTool,
    ToolResult,
    default_tools,
    small_model_tools,
)
from keel.agent.core.config_files import keel_home
from keel.agent.core.protocol import AnyEvent, TaskFinished, UserPrompt
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.harness.setup.sandboxed import setup_policy
from keel.agent.harness.setup.verify import Attempt, Recipe, Verifier
from keel.prompts import render


class SetupOptions(BaseModel):
    """How hard `keel setup` tries: proposals allowed, and each command's time limit."""

    max_attempts: int = Field(default=5, ge=1)
    command_timeout: float = Field(default=900.0, gt=0)


class SetupOutcome(BaseModel):
    """What a setup session ended with: the accepted recipe (or None), every attempt, and where logs are."""

    repo: Path
    commit: str
    recipe: Recipe | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    session_id: str = ""
    status: str = ""
    reason: str = ""
    logs: Path


def _verdict_text(attempt: Attempt, number: int, max_attempts: int) -> str:
    tests = attempt.trials[-1].tests if attempt.trials else None
    return render(
        "setup_verdict",
        accepted=attempt.accepted,
        tests=tests,
        reason=attempt.reason,
        number=number,
        max_attempts=max_attempts,
    )


async def run_setup(
    settings: SessionSettings,
    repo: Path,
    commit: str,
    options: SetupOptions,
    on_event: Callable[[AnyEvent], None] | None = None,
) -> SetupOutcome:
    """Run the setup session for `repo` at `commit`; the user's checkout is never touched."""
    logs = keel_home() / "setup" / f"{repo.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    policy = setup_policy(settings.sandbox)
    verifier = Verifier(repo, commit, policy, logs, options.command_timeout, options.max_attempts)

    async def verdict(args: ProposeSetupArgs) -> ToolResult:
        if verifier.finished:
            done = "a recipe was accepted" if verifier.accepted else "no proposals are left"
            return ToolResult(output=render("setup_not_run", done=done), ok=False)
        recipe = Recipe(install=args.install, test=args.test, notes=args.notes)
        attempt = await verifier.verify(recipe)
        text = _verdict_text(attempt, len(verifier.attempts), options.max_attempts)
        return ToolResult(output=text, ok=attempt.accepted)

    offered = small_model_tools() if settings.compact_prompt else default_tools()
    tools = [*offered, ProposeSetupTool(verdict)]
    scratch = await create_worktree(repo, "setup/explore", commit)
    own = settings.model_copy(
        update={
            "cwd": scratch.path,
            "checkpoints": False,
            "sandbox": policy,
            "approval": "full-auto",
        }
    )
    outcome = SetupOutcome(repo=repo, commit=commit, logs=logs)
    try:
        async with Session(own, tools=tools) as session:
            outcome.session_id = session.id
            prompt = render("setup", network=policy.network, max_attempts=options.max_attempts)
            reminded = False
            session.submit(UserPrompt(text=prompt))
            async for event in session.events():
                if on_event is not None:
                    on_event(event)
                if not isinstance(event, TaskFinished):
                    continue
                outcome.status, outcome.reason = event.status, event.reason
                if verifier.finished or reminded or event.status != "completed":
                    break
                reminded = True  # the model ended without a verdict: one reminder
                left = options.max_attempts - len(verifier.attempts)
                session.submit(UserPrompt(text=render("setup_reminder", left=left)))
    finally:
        await remove_worktree(scratch)
        await delete_branch_at(scratch, scratch.base)
    outcome.recipe, outcome.attempts = verifier.accepted, verifier.attempts
    return outcome
