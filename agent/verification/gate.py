"""Before a task that changed files may end: check them and, on failure, give the model the failures for a
bounded number of rounds; the final answer says what was verified (LoopSettings.verify, README: "Verification")."""

from __future__ import annotations

from collections.abc import Callable

from keel.agent.approval import Approvals
from keel.agent.config import LoopSettings
from keel.agent.protocol import AnyEvent, UserMessage, VerificationCheck, VerificationFinished
from keel.agent.state import SessionState
from keel.agent.verification.checks import run_checks
from keel.prompts import render
from keel.tools.base import ToolContext, ToolKind


def wanted(policy: LoopSettings, compact: bool) -> bool:
    """Whether this session's model has its changes checked: small models by default."""
    return policy.verify == "always" or (policy.verify == "small-models" and compact)


def answer_with(answer: str, checks: list[VerificationCheck], rounds: int) -> str:
    """The final answer and, after it, the line saying what keel verified (or what still fails)."""
    line = render("verification_summary", checks=checks, rounds=rounds)
    return f"{answer.rstrip()}\n\n{line}" if answer.strip() else line


async def verified_ending(
    answer: str,
    state: SessionState,
    policy: LoopSettings,
    *,
    compact: bool,
    ctx: ToolContext,
    test_command: str | None,
    approvals: Approvals,
    emit: Callable[[AnyEvent], None],
) -> str | None:
    """The task's final answer once the files it changed were checked; None when the failures went back to
    the model instead (the task goes on). Every check run is a `verification.finished` event."""
    if not wanted(policy, compact) or not state.task_changed:
        return answer
    changed = sorted(state.task_changed)
    may_run = approvals.verdict("run_command", ToolKind.EXEC) == "allow"
    checks = await run_checks(ctx, changed, test_command, may_run, policy.verify_timeout)
    failed = [check for check in checks if check.status == "failed"]
    rounds = state.verifications + 1
    final = not failed or rounds > policy.verify_retries
    emit(
        VerificationFinished(
            files=changed, checks=checks, passed=not failed, round=rounds, final=final
        )
    )
    if final:
        return answer_with(answer, checks, rounds)
    left = policy.verify_retries - rounds + 1
    feedback = render("verification", failed=failed, left=left)
    emit(UserMessage(text=feedback, origin="keel", purpose="verification"))
    return None
