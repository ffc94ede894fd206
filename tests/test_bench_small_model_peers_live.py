"""bench/small_model.py with every harness, the real aider and mini-swe-agent included, against one scripted
model server: each harness solves one task and fails the other, and the summary compares them. The peers are
installed first when their venvs are missing, as the bench installs them on first use (under
~/.cache/keel/bench/peers; a few minutes from the package registry); skipped only when that install fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from keel_cli import keel_env

from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall
from keel.agent.harness.testing.scripted_wire import content_text

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
from _small_model_aider import AIDER
from _small_model_mini import MINI
from _small_model_one_shot import SYSTEM as ONE_SHOT_SYSTEM
from _small_model_peers import ensure_peer
from _small_model_tasks import load_tasks

SOLVED = next(task for task in load_tasks() if task.name == "terse_add")
PATH, FIXED = next(iter(SOLVED.solution.items()))

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def peers_installed() -> None:
    """aider and mini-swe-agent in their venvs: a fresh machine (CI's) installs them here, once."""
    try:
        for peer in (AIDER, MINI):
            ensure_peer(peer)
    except (subprocess.CalledProcessError, RuntimeError, OSError) as exc:
        pytest.skip(
            f"aider or mini-swe-agent could not be installed from the package registry: {exc}"
        )


def respond(request: ChatRequest) -> Reply:
    """A model that solves SOLVED only: whole files (one-shot, aider whole), a search/replace block
    (aider diff), bash commands (mini's one tool, or fenced in its text-based config), read_file then
    write_file (keel)."""
    asked = "\n".join(
        content_text(m.get("content")) for m in request.messages if m["role"] == "user"
    )
    if SOLVED.spec.prompt not in asked:
        return Reply(text="No idea.")
    tools = [tool["function"]["name"] for tool in request.tools or []]
    done = sum(message.get("role") == "tool" for message in request.messages)
    write = f"cat > {PATH} <<'EOF'\n{FIXED}EOF"
    if tools == ["bash"]:
        command = write if done == 0 else "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
        return Reply(
            text="Fixing.",
            tool_calls=[ScriptedToolCall(name="bash", arguments={"command": command})],
        )
    system = content_text(request.messages[0].get("content"))
    if "mswea_bash_command" in system:  # mini's text-based config: one fenced command per reply
        replied = sum(message.get("role") == "assistant" for message in request.messages)
        command = write if replied == 0 else "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
        return Reply(text=f"THOUGHT: fixing.\n\n```mswea_bash_command\n{command}\n```\n")
    if tools:
        steps = [
            ScriptedToolCall(name="read_file", arguments={"path": PATH}),
            ScriptedToolCall(name="write_file", arguments={"path": PATH, "content": FIXED}),
        ]
        return Reply(tool_calls=[steps[done]]) if done < len(steps) else Reply(text="Done.")
    if system == ONE_SHOT_SYSTEM:
        return Reply(text=f"FILE: {PATH}\n```python\n{FIXED}```\n")
    if "SEARCH" in system:  # aider's diff format
        old = SOLVED.files[PATH]
        block = f"<<<<<<< SEARCH\n{old}=======\n{FIXED}>>>>>>> REPLACE\n"
        return Reply(text=f"{PATH}\n```python\n{block}```\n")
    return Reply(text=f"{PATH}\n```python\n{FIXED}```\n")  # aider's whole format


def test_every_harness_runs_on_the_same_server_and_the_summary_compares_them(
    scripted_server, tmp_path
):
    server = scripted_server(respond)
    out = tmp_path / "out"
    modes = "one-shot,keel,aider-whole,aider-diff,mini-swe-agent,mini-textbased"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "small_model.py"),
            *("--api-base", server.url, "--model", "openai/scripted-model", "--modes", modes),
            *("--tasks", "terse_add,off_by_one", "--out", str(out), "--timeout", "120"),
        ],
        env=keel_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())["tasks"]
    for mode in modes.split(","):
        assert results["terse_add"][mode][0]["passed"], (mode, done.stdout)
        assert not results["off_by_one"][mode][0]["passed"], mode
        assert results["terse_add"][mode][0]["tokens"] > 0, mode
    assert results["terse_add"]["mini-swe-agent"][0]["status"] == "Submitted"
    assert results["terse_add"]["mini-textbased"][0]["status"] == "Submitted"
    assert results["terse_add"]["aider-diff"][0]["status"] == "completed"
    for mode in ("aider-whole", "aider-diff", "mini-swe-agent", "mini-textbased"):
        assert f"{mode:<16}      1/2   50%" in done.stdout, done.stdout
        assert (out / mode / "off_by_one-1.md").exists()
    assert "keel / best peer (aider-whole): 1.00 (goal >= 1.0)" in done.stdout
    assert "keel / one-shot: 1.00 (goal >= 1.0)" in done.stdout
