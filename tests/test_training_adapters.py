"""The SkyRL generator and the TRL rollout_func (agent/harness/rollouts/adapters/) build their batches from keel
rollouts against the vLLM-shaped scripted server: every documented field, the masks and the logprobs equal to
what the server sent (the real SkyRL types: tests/test_skyrl_types.py)."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from bench_support import make_task
from test_context_budget import big_repo
from training_support import ChatTokens, GrowingContext, assert_samples_sent, fix_task

import keel
from keel.agent.core.errors import UsageError
from keel.agent.harness.rollouts.adapters.skyrl import KeelGenerator, StepTrajectoryID
from keel.agent.harness.rollouts.adapters.trl import keel_reward, keel_rollout_func

SKYRL_FIELDS = {
    "prompt_token_ids", "response_ids", "rewards", "loss_masks", "stop_reasons", "rollout_metrics",
    "rollout_logprobs", "trajectory_ids", "is_last_step",
}  # fmt: skip


async def test_a_skyrl_step_wise_batch_has_a_sample_per_call_with_the_servers_tokens(
    scripted_server, tmp_path, home
):
    model = GrowingContext(reads=1)
    server = scripted_server(model)
    task = fix_task(tmp_path)
    generator = KeelGenerator(model="openai/any", api_base=server.url, concurrency=1, out=tmp_path / "out")  # fmt: skip
    batch = {
        "prompts": [[{"role": "user", "content": "fix add"}]] * 2,
        "env_classes": ["keel"] * 2,
        "env_extras": [{"keel_task": task.model_dump(mode="json")}] * 2,
        "sampling_params": None,
        "trajectory_ids": [StepTrajectoryID("fix", 0), StepTrajectoryID("fix", 1)],
        "batch_metadata": None,
    }
    out = await generator.generate(batch)
    assert set(out) == SKYRL_FIELDS
    count = len(model.sent)
    assert count == 6  # two rollouts: edit, read, answer
    for key in SKYRL_FIELDS - {"rollout_metrics"}:
        assert len(out[key]) == count, key
    assert_samples_sent(out, model)
    assert out["is_last_step"] == [False, False, True] * 2
    assert out["stop_reasons"] == ["tool_calls", "tool_calls", "stop"] * 2
    ids = out["trajectory_ids"]
    assert [(t.instance_id, t.repetition_id, t.step) for t in ids] == [
        ("fix", r, s) for r in (0, 1) for s in (0, 1, 2)
    ]
    assert batch["trajectory_ids"][0].step is None  # the input's ids are copied, not changed
    rewards = out["rewards"]
    assert rewards[:3] == [rewards[0]] * 3 and rewards[3:] == [rewards[3]] * 3
    assert rewards[0] > 0.5 > rewards[3]  # the first rollout fixed add, the second did not
    assert out["rollout_metrics"]["keel/calls"] == count


async def test_a_skyrl_summary_is_a_sample_sharing_the_final_reward(
    scripted_server, tmp_path, home
):
    model = GrowingContext(summarize=True)
    server = scripted_server(model)
    task = keel.RolloutTask(id="read", repo=big_repo(tmp_path / "repo"), prompt="read the modules", test="true")  # fmt: skip
    generator = KeelGenerator(model="openai/any", api_base=server.url, tasks={"read": task}, context_window=4096, out=tmp_path / "out")  # fmt: skip
    ids = [StepTrajectoryID("read", 0)]
    out = await generator.generate({"prompts": [[]], "env_extras": None, "trajectory_ids": ids})
    assert len(out["response_ids"]) == len(model.sent)
    responses = [tuple(response) for response in out["response_ids"]]
    assert model.summaries and all(
        tuple(s.completion_token_ids) in responses for s in model.summaries
    )
    assert set(out["rewards"]) == {out["rewards"][-1]} and out["rewards"][-1] > 0
    assert out["is_last_step"].count(True) == 1 and out["is_last_step"][-1]


async def test_a_skyrl_input_without_a_task_is_refused_with_what_to_do():
    generator = KeelGenerator(model="openai/any")
    with pytest.raises(UsageError, match="env_extras\\['keel_task'\\]"):
        await generator.generate({"prompts": [[]], "env_extras": [{}], "trajectory_ids": None})


def test_a_trl_sample_is_the_whole_rollout_as_the_model_saw_it_with_append_only_prompts_by_default(
    scripted_server, tmp_path, home
):
    """With a server whose ids follow the messages sent, a TRL sample holds every call of the rollout; with
    the status line fresh on every request (append_only=False) it would hold the first call only."""
    for append_only, sequences, calls in ((None, [1], 4), (False, [4], 1)):
        model = ChatTokens(reads=3)
        server = scripted_server(model)
        options = {} if append_only is None else {"append_only": append_only}
        out = tmp_path / f"out-{append_only}"
        rollout_func = keel_rollout_func([fix_task(tmp_path / str(append_only))], model="openai/any", api_base=server.url, out=out, **options)  # fmt: skip
        batch = rollout_func(["fix"], None)
        assert batch["keel_sequences"] == sequences
        (mask,) = batch["env_mask"]
        (completion,) = batch["completion_ids"]
        sampled = [token for token, bit in zip(completion, mask, strict=True) if bit]
        assert sampled == [token for n in range(1, calls + 1) for token in (1000 + n, 2000 + n)]


def test_a_trl_batch_has_one_sample_per_prompt_as_one_masked_sequence(
    scripted_server, tmp_path, home
):
    model = GrowingContext(reads=1)
    server = scripted_server(model)
    rollout_func = keel_rollout_func([fix_task(tmp_path)], model="openai/any", api_base=server.url, concurrency=1, out=tmp_path / "out")  # fmt: skip
    batch = rollout_func(["fix", [{"role": "user", "content": "fix"}]], None)
    assert {"prompt_ids", "completion_ids", "logprobs", "env_mask"} <= set(batch)
    assert all(len(values) == 2 for values in batch.values())
    for number in range(2):
        calls = model.sent[3 * number : 3 * number + 3]  # one conversation: edit, read, answer
        prompt, completion = batch["prompt_ids"][number], batch["completion_ids"][number]
        mask, logprobs = batch["env_mask"][number], batch["logprobs"][number]
        assert prompt == calls[0].prompt_token_ids
        assert prompt + completion == calls[-1].prompt_token_ids + calls[-1].completion_token_ids
        assert len(mask) == len(logprobs) == len(completion)
        sampled = [n for n, bit in enumerate(mask) if bit]
        assert [completion[n] for n in sampled] == [
            t for c in calls for t in c.completion_token_ids
        ]
        assert [logprobs[n] for n in sampled] == [p for c in calls for p in c.logprobs]
        assert all(logprobs[n] == 0.0 for n, bit in enumerate(mask) if not bit)
    assert batch["keel_sequences"] == [1, 1] and batch["keel_stop_reason"] == ["stop", "stop"]
    assert batch["keel_outcome"] == [1.0, 0.0] and batch["keel_task_id"] == ["fix", "fix"]
    totals = keel_reward(["fix"] * 2, [None] * 2, **{k: v for k, v in batch.items() if k.startswith("keel_")})  # fmt: skip
    assert totals == batch["keel_total"] and totals[0] > totals[1]


def test_a_trl_prompt_naming_no_task_is_refused_with_the_known_ones(tmp_path):
    rollout_func = keel_rollout_func([fix_task(tmp_path)], model="openai/any")
    with pytest.raises(UsageError, match=r"\['nope'\] name no keel task.*\['fix'\]"):
        rollout_func(["nope"], None)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="Harbor tasks run in bubblewrap here")
async def test_both_batches_from_rollouts_of_a_harbor_task(scripted_server, tmp_path, home):
    """The issue's case: a Harbor task judged by its verifier, as SkyRL's and TRL's batches."""
    task = keel.RolloutTask(id="calc", harbor=make_task(tmp_path / "suite", "calc"))
    model = GrowingContext(reads=1)
    server = scripted_server(model)
    options = {"model": "openai/any", "api_base": server.url, "concurrency": 1}
    generator = KeelGenerator(tasks={"calc": task}, out=tmp_path / "skyrl", **options)
    ids = [StepTrajectoryID("calc", 0), StepTrajectoryID("calc", 1)]
    out = await generator.generate({"prompts": [[], []], "env_extras": None, "trajectory_ids": ids})
    sent = model.by_completion()
    assert len(out["response_ids"]) == len(model.sent) == 6
    for prompt, response, logprobs in zip(
        out["prompt_token_ids"], out["response_ids"], out["rollout_logprobs"], strict=True
    ):
        assert (prompt, logprobs) == (sent[tuple(response)].prompt_token_ids, sent[tuple(response)].logprobs)  # fmt: skip
    assert out["rewards"][0] > 0.5 > out["rewards"][3]  # the verifier's verdicts

    first_call = len(model.sent)
    rollout_func = keel_rollout_func([task], out=tmp_path / "trl", **options)
    batch = await asyncio.to_thread(rollout_func, ["calc", "calc"], None)
    calls = model.sent[first_call:]
    assert batch["keel_outcome"] == [1.0, 0.0]
    for number in range(2):
        whole = calls[3 * number + 2]
        completion = batch["completion_ids"][number]
        assert batch["prompt_ids"][number] == calls[3 * number].prompt_token_ids
        assert batch["prompt_ids"][number] + completion == whole.prompt_token_ids + whole.completion_token_ids  # fmt: skip
        assert len(batch["env_mask"][number]) == len(batch["logprobs"][number]) == len(completion)


def sampled_with(server) -> list[dict]:
    """The sampling fields of each chat request the server received."""
    keys = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_tokens")
    return [
        {key: request.body[key] for key in keys if key in request.body}
        for request in server.requests
        if request.path.endswith("/chat/completions")
    ]


async def test_a_skyrl_batchs_sampling_params_reach_every_call_unchanged(scripted_server, tmp_path, home):  # fmt: skip
    model = GrowingContext(reads=1)
    server = scripted_server(model)
    task = fix_task(tmp_path)
    generator = KeelGenerator(model="openai/any", api_base=server.url, concurrency=1, out=tmp_path / "out", sampling={"top_p": 0.5, "min_p": 0.1})  # fmt: skip
    params = {"temperature": 1.0, "top_p": 0.95, "top_k": 20, "logprobs": 0}
    batch = {"prompts": [[]], "env_extras": [{"keel_task": task.model_dump(mode="json")}], "sampling_params": params, "trajectory_ids": None}  # fmt: skip
    await generator.generate(batch)
    sent = sampled_with(server)
    assert len(sent) == 3
    assert sent == [{"temperature": 1.0, "top_p": 0.95, "top_k": 20, "min_p": 0.1}] * 3
    # recording tokens asks for logprobs whatever the trainer's engine-side setting says
    assert all(r.body["logprobs"] is True for r in server.requests if "messages" in r.body)


def test_a_trl_rollout_samples_as_the_trainers_config_says(scripted_server, tmp_path, home):
    class Config:  # GRPOConfig's sampling fields (trl >= 0.24), top_k and min_p left unset
        temperature, top_p, top_k, min_p, repetition_penalty = 0.9, 0.8, None, None, 1.1

    class Trainer:
        args = Config()

    server = scripted_server(GrowingContext(reads=1))
    rollout_func = keel_rollout_func([fix_task(tmp_path)], model="openai/any", api_base=server.url, concurrency=1, out=tmp_path / "out")  # fmt: skip
    rollout_func(["fix"], Trainer())
    assert (
        sampled_with(server) == [{"temperature": 0.9, "top_p": 0.8, "repetition_penalty": 1.1}] * 3
    )


async def test_sampling_that_would_rebuild_the_request_is_refused(tmp_path):
    with pytest.raises(UsageError, match="can't set messages, stream"):
        await keel.rollout(fix_task(tmp_path), model="openai/any", sampling={"messages": [], "stream": False})  # fmt: skip
