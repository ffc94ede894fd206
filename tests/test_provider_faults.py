"""A flaky provider: 20% of 300 model calls fail with 429, 500 or a dropped connection; no tool runs twice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from keel_cli import git_repo, run_streamed

from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall

CALLS = 300
STEPS = CALLS - 1  # every call but the last asks for one command; the last answers


def fast_retries(home: Path) -> None:
    config = home / "config" / "keel" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("retries = 8\nretry_base_delay = 0.01\n")


def one_command_per_step(request: ChatRequest) -> Reply:
    """Stateless: the next step is the number of tool results already in the conversation."""
    done = sum(1 for m in request.messages if m.get("role") == "tool")
    if done >= STEPS:
        return Reply(text=f"Ran {done} steps.")
    command = f"echo step-{done} >> steps.log"
    return Reply(tool_calls=[ScriptedToolCall(name="run_command", arguments={"command": command})])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_three_hundred_flaky_calls_run_each_tool_once(scripted_server, tmp_path):
    home = tmp_path / "home"
    fast_retries(home)
    server = scripted_server(
        one_command_per_step, fail_rate=0.2, fault_kinds=("429", "500", "drop"), seed=8
    )
    repo = git_repo(tmp_path / "repo", {"README.md": "flaky provider\n"})
    result = run_streamed(
        server.url,
        "--max-steps",
        "1000",
        "--budget",
        "1000000000",
        "--context-window",
        "10000000",
        "run the steps",
        cwd=repo,
        home=home,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.events[-1]["status"] == "completed"
    assert result.events[-1]["final_message"] == f"Ran {STEPS} steps."

    answered = [r for r in server.requests if r.answered]
    faults = Counter(r.fault for r in server.requests if r.fault)
    lines = (repo / "steps.log").read_text().splitlines()
    duplicates = len(lines) - len(set(lines))
    finished = [e for e in result.events if e["type"] == "tool.finished"]
    call_ids = [e["call_id"] for e in finished]
    retries = [e for e in result.events if e["type"] == "model.retry"]
    classes = Counter(e["error_class"] for e in retries)
    print(
        f"\ncalls: {len(answered)}, faults: {sum(faults.values())} {dict(faults)}, "
        f"duplicate executions: {duplicates + len(call_ids) - len(set(call_ids))}"
    )
    print(f"retries by error class: {dict(classes)}")

    assert len(answered) == CALLS
    assert 0.1 < sum(faults.values()) / len(server.requests) < 0.3
    assert set(faults) == {"429", "500", "drop"}
    assert duplicates == 0 and lines == [f"step-{i}" for i in range(STEPS)]
    assert len(call_ids) == STEPS == len(set(call_ids))
    assert all(e["ok"] for e in finished)
    # every fault was retried once, and shown with its class
    assert len(retries) == sum(faults.values())
    assert all(e["error_class"] and e["message"] for e in retries)
    assert {"RateLimitError", "InternalServerError"} <= set(classes)
    assert max(e["attempt"] for e in retries) <= 8
