"""The agents `keel bench` runs in a task's environment: keel itself, the oracle (solution/solve.sh), nop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from keel.agent.core.protocol import TokenUsage
from keel.agent.core.settings import SessionSettings
from keel.agent.harness.batch.runner import run_session
from keel.agent.harness.bench.environment import TaskEnvironment

AgentName = Literal["keel", "oracle", "nop"]
DEFAULT_AGENT_SECONDS = 1800.0
SOLVE_SCRIPT = "solve.sh"


class AgentOutcome(BaseModel):
    """How the agent's part ended; `status` as results.jsonl says it."""

    status: str = "completed"
    reason: str = ""
    usage: TokenUsage = TokenUsage()
    steps: int = 0
    cost: float | None = None


async def run_oracle(environment: TaskEnvironment, timeout: float, log: Path) -> AgentOutcome:
    """The reference solution: solution/ shown at /solution, solve.sh run in the workdir."""
    task = environment.task
    if not (task.solution_dir / SOLVE_SCRIPT).is_file():
        return AgentOutcome(status="error", reason=f"the task has no solution/{SOLVE_SCRIPT}")
    outcome = await environment.run(
        f"bash /solution/{SOLVE_SCRIPT}",
        timeout=timeout,
        log=log,
        env=task.config.solution.env,
        mounts={"/solution": task.solution_dir},
    )
    if outcome.stopped:
        return AgentOutcome(status="interrupted", reason="stopped while solve.sh ran")
    if outcome.timed_out:
        return AgentOutcome(status="timed_out", reason=f"solve.sh timed out after {timeout:.0f} s")
    reason = "" if outcome.ok else f"solve.sh: {outcome.describe()}"
    return AgentOutcome(reason=reason)


async def _stop_after(timeout: float, outer: asyncio.Event, inner: asyncio.Event) -> bool:
    """Set `inner` when `outer` is set or the time is up; True when it was the time."""
    try:
        await asyncio.wait_for(outer.wait(), timeout)
    except TimeoutError:
        inner.set()
        return True
    inner.set()
    return False


async def run_keel(
    environment: TaskEnvironment,
    settings: SessionSettings,
    timeout: float,
    stop: asyncio.Event,
    on_log: Callable[[Path], None],
) -> AgentOutcome:
    """keel on the instruction, its commands in the environment, interrupted at the task's time limit."""
    session_settings = settings.model_copy(
        update={
            "cwd": environment.workspace,
            "interactive": False,
            "checkpoints": False,  # the attempt's patch keeps the change
            "sandbox": environment.agent_sandbox(settings.sandbox),
        }
    )
    agent_stop = asyncio.Event()
    timer = asyncio.create_task(_stop_after(timeout, stop, agent_stop))
    try:
        finished = await run_session(
            session_settings, environment.task.instruction, agent_stop, on_log
        )
    finally:
        timer.cancel()
    timed_out = timer.done() and not timer.cancelled() and timer.result()
    status: str = finished.status
    reason = finished.reason
    if timed_out and status == "interrupted":
        status, reason = "timed_out", f"the agent ran out of its {timeout:.0f} s"
    return AgentOutcome(
        status=status,
        reason=reason,
        usage=finished.task_usage if finished.task_usage.total_tokens else finished.usage,
        steps=finished.steps,
        cost=finished.cost,
    )
