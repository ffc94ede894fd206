"""`keel export --format atif` and `--trajectories`: real sessions against the scripted server, exported
from their logs and validated with the `atif` package's models."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from atif import Trajectory
from batch_support import FILES, Agent, run_batch, write_tasks
from bench_support import make_task
from keel_cli import git_repo, run_keel, run_streamed
from test_bench import Solver
from test_context_budget import LongSession, big_repo

from keel.agent.core.protocol import (
    AssistantMessage,
    SessionStarted,
    TokenUsage,
    ToolCall,
    ToolFinished,
    TurnTokens,
    UserMessage,
)
from keel.agent.harness.rollouts.atif import segment_name, session_trajectories
from keel.agent.harness.rollouts.reward import reward
from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall


def log_events(home: Path) -> list[dict]:
    log = next((home / "sessions").glob("*.jsonl"))
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_run_with_tool_calls_exports_as_its_log_says(scripted_server, tmp_path):
    server = scripted_server(
        [
            Reply(
                text="Looking first.",
                tool_calls=[
                    ScriptedToolCall(name="read_file", arguments={"path": "calc.py"}),
                    ScriptedToolCall(name="search", arguments={"pattern": "add"}),
                ],
            ),
            Reply(
                tool_calls=[
                    ScriptedToolCall(
                        name="edit_file",
                        arguments={"path": "calc.py", "old_string": "a - b", "new_string": "a + b"},
                    )
                ]
            ),
            Reply(text="Fixed add()."),
        ]
    )
    repo = git_repo(tmp_path / "repo", FILES)
    home = tmp_path / "home"
    run = run_streamed(server.url, "fix add() in calc.py", cwd=repo, home=home)
    assert run.returncode == 0, run.stderr[-2000:]
    session_id = run.events[0]["session_id"]

    result = run_keel("export", session_id[:17], "--format", "atif", cwd=repo, home=home)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1  # no summary: one trajectory
    trajectory = Trajectory.model_validate_json(lines[0])
    assert trajectory.schema_version == "ATIF-v1.8" and trajectory.session_id == session_id
    assert trajectory.agent.name == "keel" and trajectory.agent.model_name == "openai/any"
    assert trajectory.continued_trajectory_ref is None

    events = log_events(home)
    messages = [e for e in events if e["type"] == "assistant.message"]
    finished = {e["call_id"]: e for e in events if e["type"] == "tool.finished"}
    agent_steps = [s for s in trajectory.steps if s.source == "agent"]
    assert [s.message for s in agent_steps] == [m["text"] for m in messages]
    assert trajectory.steps[0].source == "user"
    assert trajectory.steps[0].message == "fix add() in calc.py"
    for step, message in zip(agent_steps, messages, strict=True):
        calls = step.tool_calls or []
        assert [(c.tool_call_id, c.function_name) for c in calls] == [
            (c["id"], c["name"]) for c in message["tool_calls"]
        ]
        assert [c.arguments for c in calls] == [
            json.loads(c["arguments"]) for c in message["tool_calls"]
        ]
        results = step.observation.results if step.observation else []
        assert [(r.source_call_id, r.content) for r in results] == [
            (c["id"], finished[c["id"]]["output"]) for c in message["tool_calls"]
        ]
        assert step.metrics is not None
        assert step.metrics.prompt_tokens == message["usage"]["prompt_tokens"] > 0
        assert step.metrics.completion_tokens == message["usage"]["completion_tokens"]
        assert step.metrics.prompt_token_ids is None  # not recorded: never invented
    assert [c.function_name for s in agent_steps for c in s.tool_calls or []] == [
        "read_file",
        "search",
        "edit_file",
    ]
    edit = agent_steps[1].observation.results[0]
    assert edit.extra["status"] == "ok" and "+    return a + b" in edit.extra["diff"]
    final = trajectory.final_metrics
    assert final.total_prompt_tokens == sum(m["usage"]["prompt_tokens"] for m in messages)
    assert final.total_completion_tokens == sum(m["usage"]["completion_tokens"] for m in messages)
    assert final.total_steps == len(trajectory.steps)
    assert trajectory.extra["keel"]["status"] == "completed"


def test_a_summarized_session_is_a_chain_of_linked_segments(scripted_server, tmp_path):
    script = LongSession(steps=24)
    server = scripted_server(script, context_limit=6144)
    repo = big_repo(tmp_path / "repo")
    home = tmp_path / "home"
    run = run_streamed(
        server.url, "--context-window", "6144", "--budget", "10000000", "read every module",
        cwd=repo, home=home, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    summaries = [e for e in run.events if e["type"] == "context.summarized"]
    assert len(summaries) >= 2, "the window should force at least two summaries"
    session_id = run.events[0]["session_id"]

    out = tmp_path / "export" / "run.json"
    result = run_keel(
        "export", session_id, "--format", "atif", "-o", str(out), "--outcome", "1",
        cwd=repo, home=home,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    paths = [out.with_name(segment_name(out.name, i)) for i in range(len(summaries) + 1)]
    assert sorted(out.parent.iterdir()) == sorted(paths)
    assert paths[1].name == "run.cont-1.json"
    chain = [Trajectory.model_validate_json(path.read_text()) for path in paths]
    for index, trajectory in enumerate(chain):
        expected_ref = paths[index + 1].name if index + 1 < len(chain) else None
        assert trajectory.continued_trajectory_ref == expected_ref
        assert trajectory.session_id == session_id
        assert trajectory.extra["keel"] == {
            "segment": index,
            "segments": len(chain),
            "status": "completed",
        }
    assert len({t.trajectory_id for t in chain}) == len(chain)
    # every segment but the last ends with the summary the model wrote
    for trajectory, summary in zip(chain, summaries, strict=False):
        last = trajectory.steps[-1]
        assert last.source == "agent" and last.message == summary["summary"]
        assert last.extra["keel_event"] == "context.summarized"
        assert last.metrics.completion_tokens == summary["usage"]["completion_tokens"]
    # each continuation starts from the summary block the model saw: the task and the summary in it
    for trajectory, summary in zip(chain[1:], summaries, strict=True):
        first = trajectory.steps[0]
        assert first.source == "user" and first.extra == {"keel": "summary_block"}
        assert "read every module" in first.message and summary["summary"] in first.message
        copied = [s for s in trajectory.steps if s.is_copied_context]
        assert len(copied) <= summary["kept_messages"]
        assert all(s.metrics is None for s in copied)
    # that block is what the server received after the first summary
    after = next(
        r for r in server.requests if summaries[0]["summary"] in str(r.messages[1].get("content"))
    )
    assert after.messages[1]["content"] == chain[1].steps[0].message
    # the model calls of all segments add up to the session's
    calls = [e for e in log_events(home) if e["type"] == "assistant.message"]
    exported = [
        s for t in chain for s in t.steps if s.source == "agent" and not s.is_copied_context
    ]
    assert len(exported) == len(calls) + len(summaries)
    # all segments carry the same reward, with its parts
    rewards = [t.extra["reward"] for t in chain]
    assert all(r == rewards[0] for r in rewards)
    assert rewards[0]["outcome"] == 1.0 and rewards[0]["total"] == pytest.approx(
        1.0 - rewards[0]["penalty"]
    )
    assert rewards[0]["tokens"] == run.events[-1]["usage"]["total_tokens"]
    assert rewards[0] == reward(1.0, rewards[0]["tokens"]).model_dump()


def test_export_errors_are_usage_errors(scripted_server, tmp_path):
    repo = git_repo(tmp_path / "repo", FILES)
    home = tmp_path / "home"
    unknown = run_keel("export", "nope", "--format", "atif", cwd=repo, home=home)
    assert unknown.returncode == 2
    assert (
        "no single session matches 'nope'" in unknown.stderr and "keel sessions" in unknown.stderr
    )
    server = scripted_server(["Nothing to do."])
    run = run_streamed(server.url, "say hi", cwd=repo, home=home)
    session_id = run.events[0]["session_id"]
    bad = run_keel("export", session_id, "--format", "json", cwd=repo, home=home)
    assert bad.returncode == 2 and "unknown --format 'json'" in bad.stderr and "atif" in bad.stderr
    assert bad.stdout == ""


def test_token_ids_and_logprobs_are_exported_as_recorded_and_missing_ones_say_so():
    """The events as the token-capturing transports log them: ids and logprobs pass through unchanged."""
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "a.py"}')
    recorded = TurnTokens(
        prompt_token_ids=[1, 2, 3], completion_token_ids=[7, 8], logprobs=[-0.1, -2.5]
    )
    events = [
        SessionStarted(session_id="s1", model="openai/m", cwd="/w", context_window=8192, tool_protocol="native", approval="full-auto"),
        UserMessage(text="go"),
        AssistantMessage(text="", tool_calls=[call], usage=TokenUsage(prompt_tokens=3, completion_tokens=2, total_tokens=5), cost=0.5, tokens=recorded),
        ToolFinished(call_id="c1", name="read_file", output="x = 1"),
        AssistantMessage(text="done", usage=TokenUsage(prompt_tokens=9, completion_tokens=1, total_tokens=10), tokens=TurnTokens(missing="the server returned no token ids")),
        AssistantMessage(text="plain", usage=TokenUsage(prompt_tokens=4, completion_tokens=1, total_tokens=5)),
    ]  # fmt: skip
    (trajectory,) = session_trajectories(events, "s1.json")
    trajectory = Trajectory.model_validate(trajectory.to_json_dict())
    first, second, third = (s for s in trajectory.steps if s.source == "agent")
    assert first.metrics.prompt_token_ids == [1, 2, 3]
    assert first.metrics.completion_token_ids == [7, 8] and first.metrics.logprobs == [-0.1, -2.5]
    assert first.metrics.cost_usd == 0.5 and first.metrics.extra is None
    assert first.tool_calls[0].arguments == {"path": "a.py"}
    assert first.observation.results[0].content == "x = 1"
    assert second.metrics.prompt_token_ids is None and second.metrics.logprobs is None
    assert second.metrics.extra == {"tokens_missing": "the server returned no token ids"}
    assert third.metrics.extra is None and third.metrics.completion_token_ids is None
    assert trajectory.final_metrics.total_cost_usd == 0.5
    assert trajectory.final_metrics.total_prompt_tokens == 16


def test_batch_trajectories_carry_rewards_and_group_advantages(scripted_server, tmp_path):
    server = scripted_server(Agent({"t0": [True, False], "t1": [True]}))
    repo = git_repo(tmp_path / "repo", FILES)
    tasks = write_tasks(tmp_path / "tasks.jsonl", ["t0", "t1"], repo)
    out, home = tmp_path / "out", tmp_path / "home"
    flags = ["--model", "openai/any", "--api-base", server.url, "--out", str(out)]
    result = run_batch(
        str(tasks), *flags, "--attempts", "2", "-j", "1", "--trajectories", cwd=tmp_path, home=home
    )
    assert result.returncode == 0, result.stderr
    assert "the groups' advantages in" in result.stderr
    rows = {(r["id"], r["attempt"]): r for r in map(json.loads, (out / "results.jsonl").open())}
    assert all("trajectory" not in row for row in rows.values())  # the rows are unchanged
    groups = {g["id"]: g for g in map(json.loads, (out / "trajectories" / "groups.jsonl").open())}
    assert set(groups) == {"t0", "t1"}
    for task_id, group in groups.items():
        totals = []
        for entry in group["attempts"]:
            row = rows[(task_id, entry["attempt"])]
            path = out / "trajectories" / entry["trajectory"]
            assert path.name == f"{task_id}.{entry['attempt']}.json"
            trajectory = Trajectory.model_validate_json(path.read_text())
            assert trajectory.extra["reward"] == entry["reward"]
            assert trajectory.extra["advantage"] == entry["advantage"]
            assert entry["reward"]["outcome"] == (1.0 if row["pass"] else 0.0)
            assert entry["reward"]["tokens"] == row["tokens"]
            totals.append(entry["reward"]["total"])
        mean = sum(totals) / 2
        assert group["mean"] == pytest.approx(mean)
        std = abs(totals[0] - totals[1]) / 2**0.5  # the sample std of two values
        assert group["std"] == pytest.approx(std)
        for entry, total in zip(group["attempts"], totals, strict=True):
            assert entry["advantage"] == pytest.approx((total - mean) / (std + 1e-4))
    # t0: one pass, one fail: the pass is preferred; t1 passed twice: nothing to prefer
    t0 = {e["attempt"]: e["advantage"] for e in groups["t0"]["attempts"]}
    passed = next(a for a in (1, 2) if rows[("t0", a)]["pass"])
    assert t0[passed] > 0 > t0[3 - passed]
    assert [e["advantage"] for e in groups["t1"]["attempts"]] == pytest.approx([0.0, 0.0], abs=0.05)


@pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="keel bench's local environment needs bubblewrap"
)
def test_bench_trajectories_validate_and_carry_the_verifier_reward(scripted_server, tmp_path):
    suite = tmp_path / "suite"
    make_task(suite, "easy", instruction="task easy: add() is wrong")
    server = scripted_server(Solver({"easy": [True, False]}))
    out, home = tmp_path / "out", tmp_path / "home"
    result = run_keel(
        "bench", str(suite), "--model", "openai/any", "--api-base", server.url, "-k", "2", "-j", "1",
        "--out", str(out), "--env", "local", "--trajectories", cwd=tmp_path, home=home, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (group,) = map(json.loads, (out / "trajectories" / "groups.jsonl").open())
    rows = {r["attempt"]: r for r in map(json.loads, (out / "results.jsonl").open())}
    assert sorted(rows[e["attempt"]]["reward"] for e in group["attempts"]) == [0.0, 1.0]
    for entry in group["attempts"]:
        trajectory = Trajectory.model_validate_json(
            (out / "trajectories" / entry["trajectory"]).read_text()
        )
        assert trajectory.extra["reward"]["outcome"] == rows[entry["attempt"]]["reward"]
        names = [c.function_name for s in trajectory.steps for c in s.tool_calls or []]
        assert names == ["run_command", "edit_file"]
    assert group["attempts"][0]["advantage"] == pytest.approx(-group["attempts"][1]["advantage"])
