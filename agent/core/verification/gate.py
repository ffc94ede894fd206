"""Before a task that changed files may end: check them and, on failure, give the model the failures for a
bounded number of rounds; the final answer says what was verified (LoopSettings.verify, README: "Verification")."""

from __future__ import annotations

from collections.abc import Callable

from keel.agent.core.config import LoopSettings
from keel.agent.core.protocol import UserMessage, VerificationCheck, VerificationFinished
from keel.agent.core.state import SessionState
from keel.agent.core.strategies.ending import Ending
from keel.agent.core.verification.checks import run_checks
from keel.prompts import render
from keel.tools.base import ToolContext


def answer_with(answer: str, checks: list[VerificationCheck], rounds: int) -> str:
    """The final answer and, after it, the line saying what keel verified (or what still fails)."""
    line = render("verification_summary", checks=checks, rounds=rounds)
    return f"{answer.rstrip()}\n\n{line}" if answer.strip() else line


async def verified_ending(
    answer: str,
    state: SessionState,
    policy: LoopSettings,
    *,
    ctx: ToolContext,
    test_command: str | None,
    may_run: bool,
    feedback: Callable[[list[VerificationCheck], int], UserMessage] | None = None,
) -> Ending:
    """The task's final answer once the files it changed were checked, or the failures for the model instead
    (the task goes on, for at most `verify_retries` rounds). Every check run is a `verification.finished`
    event; `may_run`: the approval policy lets the test command run without asking; `feedback`, what the
    model is told of the failed checks with how many rounds are left (`verification_feedback` by default)."""
    changed = sorted(state.strategy.task_changed)
    if not changed:
        return Ending(answer)
    checks = await run_checks(ctx, changed, test_command, may_run, policy.verify_timeout)
    failed = [check for check in checks if check.status == "failed"]
    rounds = state.strategy.verifications + 1
    final = not failed or rounds > policy.verify_retries
    finished = VerificationFinished(
        files=changed, checks=checks, passed=not failed, round=rounds, final=final
    )
    if final:
        return Ending(answer_with(answer, checks, rounds), (finished,))
    told = (feedback or verification_feedback)(failed, policy.verify_retries - rounds + 1)
    return Ending(None, (finished, told))


def verification_feedback(failed: list[VerificationCheck], left: int) -> UserMessage:
    """The failed checks, for the model to mend with its tools before it answers again."""
    text = render("verification", failed=failed, left=left)
    return UserMessage(text=text, origin="keel", purpose="verification")
