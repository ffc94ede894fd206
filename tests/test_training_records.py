"""Training records from the log alone (agent/harness/rollouts/training.py): one per model call, equal to what the
vLLM-shaped scripted server sent, with its role, segment, stop reason and the rollout's reward; append-only calls
joined as one sequence whose response mask and logprobs line up with its ids."""

from __future__ import annotations

import re
from pathlib import Path

from keel_cli import git_repo
from session_support import until_finished
from test_context_budget import big_repo
from test_record_tokens import tokens_for
from training_support import CALC, GrowingContext, fix_task

import keel
from keel.agent.core.protocol import AssistantMessage, UserPrompt
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.core.store import read_events, sessions_dir
from keel.agent.harness.rollouts.training import (
    TrainingRecord,
    log_training_records,
    training_records,
    training_sequences,
)
from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall


def assert_as_sent(records: list[TrainingRecord], model: GrowingContext) -> None:
    sent = model.by_completion()
    for record in records:
        tokens = sent[tuple(record.completion_ids)]
        assert record.prompt_ids == tokens.prompt_token_ids
        assert record.logprobs == tokens.logprobs
        assert record.loss_mask == [1] * len(tokens.completion_token_ids)


async def test_an_append_only_rollout_is_one_sequence_with_its_records_as_sent(
    scripted_server, tmp_path, home
):
    model = GrowingContext(reads=2)
    server = scripted_server(model)
    rollout = await keel.rollout(fix_task(tmp_path), model="openai/any", api_base=server.url, out=tmp_path / "out")  # fmt: skip
    assert rollout.status == "completed" and rollout.reward is not None
    records = rollout.training_records(policy_version="step-7")
    assert len(records) == len(model.sent) == 4  # edit, read, read, answer
    assert_as_sent(records, model)
    assert [r.stop_reason for r in records] == ["tool_calls"] * 3 + ["stop"]
    assert [r.context_reset for r in records] == [True, False, False, False]
    assert {(r.role, r.segment, r.policy_version) for r in records} == {("agent", 0, "step-7")}
    assert all(r.reward == rollout.reward and r.advantage == rollout.advantage for r in records)
    assert rollout.session_log is not None
    from_log = log_training_records(rollout.session_log)  # the log alone: no reward known
    assert [r.model_copy(update={"reward": None, "advantage": None, "policy_version": None}) for r in records] == from_log  # fmt: skip

    (sequence,) = rollout.sequences()
    first, last = model.sent[0], model.sent[-1]
    assert sequence.prompt_ids == first.prompt_token_ids
    whole = last.prompt_token_ids + last.completion_token_ids
    assert sequence.prompt_ids + sequence.response_ids == whole
    assert len(sequence.response_mask) == len(sequence.response_ids)
    sampled = [i for i, bit in enumerate(sequence.response_mask) if bit]
    assert [sequence.response_ids[i] for i in sampled] == [
        token for sent in model.sent for token in sent.completion_token_ids
    ]
    assert sequence.response_logprobs is not None
    assert [sequence.response_logprobs[i] for i in sampled] == [
        logprob for sent in model.sent for logprob in sent.logprobs
    ]
    assert all(sequence.response_logprobs[i] == 0.0 for i, bit in enumerate(sequence.response_mask) if not bit)  # fmt: skip
    assert sequence.calls == [0, 1, 2, 3] and sequence.stop_reason == "stop"
    assert sequence.reward == rollout.reward

    # a run killed after its second call: the log ends there, its last call is the interrupted one
    events = read_events(rollout.session_log)
    cut = [i for i, e in enumerate(events) if isinstance(e, AssistantMessage)][1] + 1
    killed = training_records(events[:cut])
    assert [r.stop_reason for r in killed] == ["tool_calls", "interrupted"]
    errored = training_records(events[:cut], status="error")  # a harness that says it errored
    assert [r.stop_reason for r in errored] == ["tool_calls", "error"]


async def test_a_self_summary_starts_a_new_segment_and_shares_the_final_reward(
    scripted_server, tmp_path, home
):
    model = GrowingContext(summarize=True)
    server = scripted_server(model)
    task = keel.RolloutTask(id="read", repo=big_repo(tmp_path / "repo"), prompt="read the modules", test="true")  # fmt: skip
    rollout = await keel.rollout(task, model="openai/any", api_base=server.url, context_window=4096, out=tmp_path / "out")  # fmt: skip
    assert rollout.status == "completed" and rollout.reward is not None
    records = rollout.training_records()
    assert len(records) == len(model.sent)
    assert_as_sent(records, model)
    summaries = [i for i, r in enumerate(records) if r.role == "self_summary"]
    assert summaries, "the context was never summarized"
    at = summaries[0]
    assert records[at].segment == 0 and records[at].context_reset
    assert records[at].stop_reason == "stop"
    assert records[at + 1].role == "agent" and records[at + 1].segment == 1
    assert records[at + 1].context_reset
    assert all(r.reward == rollout.reward for r in records)
    sequences = training_sequences(records)
    assert [s.role for s in sequences].count("self_summary") == len(summaries)
    (summary,) = [s for s in sequences if s.calls == [records[at].call]]
    assert summary.role == "self_summary" and summary.response_mask == [1] * len(summary.response_ids)  # fmt: skip
    assert sequences[-1].segment == records[-1].segment >= 1
    assert sum(s.num_turns for s in sequences) == len(records)


async def test_a_rollout_stopped_by_its_step_limit_ends_on_a_budget_stop(
    scripted_server, tmp_path, home
):
    server = scripted_server(GrowingContext(reads=10))
    rollout = await keel.rollout(fix_task(tmp_path), model="openai/any", api_base=server.url, max_steps=3, out=tmp_path / "out")  # fmt: skip
    assert rollout.status == "max_steps"
    records = rollout.training_records()
    assert len(records) == 3
    assert [r.stop_reason for r in records] == ["tool_calls", "tool_calls", "budget"]
    assert training_sequences(records)[-1].stop_reason == "budget"


async def test_a_subagents_calls_are_aux_records_after_the_parents(scripted_server, tmp_path, home):
    def task_call() -> ScriptedToolCall:
        arguments = {"description": "find the adder", "prompt": "Which file defines add?"}
        return ScriptedToolCall(name="task", arguments=arguments)

    sent = [tokens_for(step) for step in range(1, 5)]
    read = ScriptedToolCall(name="read_file", arguments={"path": "calc.py"})
    server = scripted_server(
        [
            Reply(tool_calls=[task_call()], tokens=sent[0]),  # the parent
            Reply(tool_calls=[read], tokens=sent[1]),  # the child
            Reply(text="calc.py", tokens=sent[2]),  # the child
            Reply(text="It is calc.py.", tokens=sent[3]),  # the parent
        ]
    )
    repo = git_repo(tmp_path / "repo", CALC)
    settings = SessionSettings(
        cwd=repo, model="openai/any", api_base=server.url, record_tokens=True
    )
    async with Session(settings) as parent:
        parent.submit(UserPrompt(text="where is add?"))
        await until_finished(parent)
    records = log_training_records(sessions_dir() / f"{parent.id}.jsonl")
    assert [r.role for r in records] == ["agent", "agent", "aux", "aux"]
    assert [r.completion_ids for r in records] == [
        sent[i].completion_token_ids for i in (0, 3, 1, 2)
    ]
    assert records[2].session_id == records[3].session_id != records[0].session_id == parent.id
    assert [r.stop_reason for r in records] == ["tool_calls", "stop", "tool_calls", "stop"]


def test_the_readme_names_every_field_of_a_record():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("## Training with keel", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in re.findall(r"`(\w+)`", row)}
    assert named == set(TrainingRecord.model_fields)
