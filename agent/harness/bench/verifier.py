"""The verifier as Harbor defines it: tests/ shown at /tests after the agent stops, test.sh run, the reward read."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from keel.agent.harness.batch.runner import last_lines
from keel.agent.harness.bench.environment import TaskEnvironment

TEST_SCRIPT = "test.sh"


class Verdict(BaseModel):
    """The reward test.sh wrote (reward.txt, or reward.json's `reward`), or why there is none."""

    reward: float | None = None
    timed_out: bool = False
    stopped: bool = False
    exit_code: int | None = None
    problem: str = ""

    @property
    def passed(self) -> bool:
        """A full reward passes; partial rewards count in the mean reward only."""
        return self.reward is not None and self.reward >= 1.0

    @property
    def broken(self) -> bool:
        """No reward, and not for lack of time: the verifier itself failed, an error of the task's environment."""
        return self.reward is None and not self.timed_out and not self.stopped


def read_reward(verifier_logs: Path) -> float:
    """reward.txt's number, else reward.json's `reward` (or its only value); ValueError says what is wrong."""
    text_file, json_file = verifier_logs / "reward.txt", verifier_logs / "reward.json"
    if text_file.is_file():
        text = text_file.read_text(encoding="utf-8").strip()
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"reward.txt holds {text[:40]!r}, not a number") from None
    if json_file.is_file():
        try:
            data = json.loads(json_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"reward.json is not JSON: {exc.msg}") from None
        if isinstance(data, dict) and len(data) == 1 and "reward" not in data:
            data = {"reward": next(iter(data.values()))}
        if isinstance(data, dict) and isinstance(data.get("reward"), int | float):
            return float(data["reward"])
        raise ValueError("reward.json has no numeric `reward`")
    raise ValueError("tests/test.sh wrote no /logs/verifier/reward.txt or reward.json")


async def verify(environment: TaskEnvironment, log: Path) -> Verdict:
    """Run tests/test.sh in the environment and read its reward."""
    task = environment.task
    if not (task.tests_dir / TEST_SCRIPT).is_file():
        return Verdict(problem=f"the verifier gave no reward: the task has no tests/{TEST_SCRIPT}")
    outcome = await environment.run(
        f"bash /tests/{TEST_SCRIPT}",
        timeout=task.config.verifier.timeout_sec,
        log=log,
        env=task.config.verifier.env,
        mounts={"/tests": task.tests_dir},
    )
    if outcome.timed_out or outcome.stopped:
        what = "timed out" if outcome.timed_out else "was stopped"
        return Verdict(
            timed_out=outcome.timed_out, stopped=outcome.stopped, problem=f"the verifier {what}"
        )
    try:
        reward = read_reward(environment.logs / "verifier")
    except ValueError as exc:
        ended = f"test.sh exited with {outcome.exit_code}: {last_lines(outcome.tail)}".rstrip(": ")
        return Verdict(
            exit_code=outcome.exit_code, problem=f"the verifier gave no reward: {exc} ({ended})"
        )
    return Verdict(reward=reward, exit_code=outcome.exit_code)
