"""The rollout API (`keel.rollouts`): the README's example prints GRPO rows whose ids are the server's; a rollout
whose context was summarized is a linked chain of trajectories with exact tokens and one shared reward."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from bench_support import make_task
from keel_cli import git_repo, keel_env
from test_context_budget import big_repo, is_summary_request
from test_record_tokens import tokens_for

import keel
from keel.agent.harness.rollouts.atif import segment_name
from keel.agent.harness.testing.scripted_server import (
    ChatRequest,
    Reply,
    ReplyTokens,
    ScriptedToolCall,
)

README = Path(__file__).resolve().parent.parent / "README.md"
CALC = {"calc.py": "def add(a, b):\n    return a - b\n"}


def readme_example() -> str:
    text = README.read_text()
    block = text.split("<!-- rollout-example -->", 1)[1]
    return re.search(r"```python\n(.*?)```", block, re.DOTALL).group(1)


class FixesHalf:
    """Every rollout edits calc.py (the first to arrive fixes it, the next not, and so on), then answers;
    each reply carries its own token ids and logprobs, kept to compare with what keel exported."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started = 0
        self.sent: list[ReplyTokens] = []

    def __call__(self, request: ChatRequest) -> Reply:
        with self.lock:
            tokens = tokens_for(len(self.sent) + 1)
            self.sent.append(tokens)
            if any(m.get("role") == "tool" for m in request.messages):
                return Reply(text="Fixed.", tokens=tokens)
            fix = self.started % 2 == 0
            self.started += 1
        edit = {"path": "calc.py", "old_string": "a - b", "new_string": "a + b" if fix else "a * b"}
        return Reply(tool_calls=[ScriptedToolCall(name="edit_file", arguments=edit)], tokens=tokens)


def test_the_readme_example_prints_grpo_rows_with_the_servers_tokens(scripted_server, tmp_path):
    model = FixesHalf()
    server = scripted_server(model)
    script = tmp_path / "example.py"
    script.write_text(readme_example())
    repo = git_repo(tmp_path / "repo", CALC)
    done = subprocess.run(
        [sys.executable, str(script), str(repo)],
        env=keel_env(tmp_path / "home", KEEL_API_BASE=server.url),
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == len(model.sent) == 8  # 4 rollouts, 2 model calls each
    sent = {tuple(t.completion_token_ids): t for t in model.sent}
    for row in rows:
        tokens = sent[tuple(row["completion_ids"])]
        assert row["prompt_ids"] == tokens.prompt_token_ids and row["logprobs"] == tokens.logprobs
    advantages = {row["rollout"]: row["advantage"] for row in rows}
    assert sorted(advantages) == [1, 2, 3, 4]
    assert (
        sum(a > 0 for a in advantages.values()) == 2
        and sum(a < 0 for a in advantages.values()) == 2
    )
    assert sum(advantages.values()) == pytest.approx(0, abs=1e-9)


class ReadsUntilSummarized:
    """Reads big modules until keel summarizes the context, then answers; every reply has tokens."""

    def __init__(self) -> None:
        self.by_completion: dict[tuple[int, ...], ReplyTokens] = {}
        self.summarized = False

    def __call__(self, request: ChatRequest) -> Reply:
        tokens = tokens_for(request.step + 100 * len(self.by_completion), length=9)
        self.by_completion[tuple(tokens.completion_token_ids)] = tokens
        if is_summary_request(request):
            self.summarized = True
            return Reply(text="## Goal\nRead the modules.\n## Done\nRead some.", tokens=tokens)
        if self.summarized:
            return Reply(text="Read enough of them.", tokens=tokens)
        call = ScriptedToolCall(name="read_file", arguments={"path": f"mod{request.step % 20}.py"})
        return Reply(tool_calls=[call], tokens=tokens)


async def test_a_summarized_rollout_is_a_chain_with_exact_tokens_and_one_reward(
    scripted_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    model = ReadsUntilSummarized()
    server = scripted_server(model)
    task = keel.RolloutTask(
        id="read", repo=big_repo(tmp_path / "repo"), prompt="read the modules", test="true"
    )
    rollout = await keel.rollout(
        task, model="openai/any", api_base=server.url, context_window=4096, out=tmp_path / "out"
    )
    assert rollout.status == "completed" and rollout.reward is not None
    assert rollout.reward.outcome == 1.0 and rollout.reward.total == pytest.approx(
        1.0 - rollout.reward.penalty
    )
    chain = rollout.trajectories
    assert len(chain) >= 2
    for index, segment in enumerate(chain[:-1]):  # each names the next one's file
        assert segment.continued_trajectory_ref == segment_name("read.1.json", index + 1)
        assert chain[index + 1].trajectory_id == f"{segment.session_id}.cont-{index + 1}"
    assert chain[-1].continued_trajectory_ref is None
    assert all(segment.extra["reward"] == rollout.reward.model_dump() for segment in chain)
    agent_steps = [step for segment in chain for step in segment.steps if step.source == "agent"]
    assert len(agent_steps) == len(model.by_completion)  # every call, the summaries' included
    for step in agent_steps:
        sent = model.by_completion[tuple(step.metrics.completion_token_ids)]
        assert step.metrics.prompt_token_ids == sent.prompt_token_ids
        assert step.metrics.logprobs == sent.logprobs
    for segment in chain:
        keel_trajectory = type(segment).model_validate(segment.model_dump())  # valid ATIF
        assert keel_trajectory.schema_version == "ATIF-v1.8"


def test_a_task_needs_a_repo_and_prompt_or_a_harbor_folder():
    with pytest.raises(ValueError, match="needs `harbor`"):
        keel.RolloutTask(id="x", prompt="do it")


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="Harbor tasks run in bubblewrap here")
async def test_rollouts_of_a_harbor_task_are_judged_by_its_verifier(
    scripted_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    server = scripted_server(FixesHalf())
    task = keel.RolloutTask(id="calc", harbor=make_task(tmp_path / "suite", "calc"))
    (group,) = await keel.rollouts(
        [task], model="openai/any", api_base=server.url, k=2, concurrency=1, out=tmp_path / "out"
    )
    first, second = group.rollouts
    assert (first.reward.outcome, second.reward.outcome) == (1.0, 0.0)
    assert first.advantage > 0 > second.advantage and group.mean == pytest.approx(
        (first.reward.total + second.reward.total) / 2
    )
    assert first.trajectories[0].extra["advantage"] == first.advantage
