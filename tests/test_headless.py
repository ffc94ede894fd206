"""`keel run` end to end: the real CLI process, real litellm, the scripted server, a real git repo."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest
from keel_cli import KEEL, git_repo, keel_env, run_keel, run_streamed

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

BUGGY = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "check.py": "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('check passed')\n",
}
STEPS = [
    ("read_file", {"path": "calc.py"}),
    ("edit_file", {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
    ("run_command", {"command": "python3 check.py"}),
]
FINAL = "Fixed add() in calc.py; check.py passes."


def native_script() -> list[Reply]:
    calls = [Reply(tool_calls=[ScriptedToolCall(name=n, arguments=a)]) for n, a in STEPS]
    return [*calls, Reply(text=FINAL)]


def text_script() -> list[Reply]:
    def tagged(name: str, arguments: dict) -> Reply:
        body = json.dumps({"name": name, "arguments": arguments})
        return Reply(text=f"Next step.\n<tool_call>\n{body}\n</tool_call>")

    return [*(tagged(n, a) for n, a in STEPS), Reply(text=FINAL)]


def fast_retries(home: Path, retries: int = 4) -> None:
    """A user config that keeps retry back-off short, so tests do not wait seconds per fault."""
    config = home / "config" / "keel" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"retries = {retries}\nretry_base_delay = 0.05\n")


def run_task(server, repo: Path, home: Path, *extra: str):
    return run_streamed(
        server.url,
        *extra,
        "make the failing test pass",
        cwd=repo,
        home=home,
    )


@pytest.mark.parametrize("protocol", ["native", "text"])
def test_fixes_the_failing_check(scripted_server, tmp_path, protocol):
    server = scripted_server(native_script() if protocol == "native" else text_script())
    repo = git_repo(tmp_path / "repo", BUGGY)
    result = run_task(server, repo, tmp_path / "home", "--tool-protocol", protocol)

    assert result.returncode == 0, result.stderr
    types = result.types()
    assert types[0] == "session.started" and types[-1] == "session.finished"
    tools = [e["name"] for e in result.events if e["type"] == "tool.finished"]
    assert tools == ["read_file", "edit_file", "run_command"]
    # each tool.started is followed by its tool.finished, after the assistant message that asked for it
    assert (
        types.index("assistant.message")
        < types.index("tool.started")
        < types.index("tool.finished")
    )
    finished = [e for e in result.events if e["type"] == "tool.finished"]
    assert all(e["ok"] for e in finished), finished
    assert "check passed" in finished[2]["output"]
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    end = result.events[-1]
    assert end["status"] == "completed" and end["final_message"] == FINAL
    assert end["usage"]["total_tokens"] > 0 and end["steps"] == 3

    first = server.requests[0]
    if protocol == "native":
        assert "edit_file" in first.tool_names
    else:
        assert first.tools == []
        assert "<tool_call>" in first.messages[0]["content"]
        assert any("<tool_result" in str(m["content"]) for m in server.requests[-1].messages)


def test_session_log_holds_every_event(scripted_server, tmp_path):
    server = scripted_server(native_script())
    repo = git_repo(tmp_path / "repo", BUGGY)
    home = tmp_path / "home"
    result = run_task(server, repo, home)
    assert result.returncode == 0, result.stderr
    logs = list((home / "sessions").glob("*.jsonl"))
    assert len(logs) == 1
    logged = [json.loads(line) for line in logs[0].read_text().splitlines()]
    assert logged == result.events
    assert logs[0].stem == result.events[0]["session_id"]


def test_malformed_calls_come_back_as_errors(scripted_server, tmp_path):
    server = scripted_server(
        [
            Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments='{"path": "calc.py"')]),
            Reply(tool_calls=[ScriptedToolCall(name="delete_everything", arguments={})]),
            Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": ["calc.py"]})]),
            Reply(
                tool_calls=[
                    ScriptedToolCall(name="read_file", arguments={"path": "calc.py", "x": 1})
                ]
            ),
            Reply(text="Gave up on the tools."),
        ]
    )
    repo = git_repo(tmp_path / "repo", BUGGY)
    result = run_task(server, repo, tmp_path / "home")
    assert result.returncode == 0, result.stderr
    outputs = [e["output"] for e in result.events if e["type"] == "tool.finished"]
    assert len(outputs) == 4
    assert "not valid JSON" in outputs[0]
    assert "no tool named 'delete_everything'" in outputs[1] and "read_file" in outputs[1]
    assert "path" in outputs[2] and "invalid arguments" in outputs[2]
    assert "x" in outputs[3]
    # the model saw each error as its tool result
    tool_messages = [m for m in server.requests[-1].messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == outputs


def test_rate_limits_and_server_errors_are_retried(scripted_server, tmp_path):
    home = tmp_path / "home"
    fast_retries(home)
    server = scripted_server(native_script())
    server.inject_faults("429", "500", "drop")
    repo = git_repo(tmp_path / "repo", BUGGY)
    result = run_task(server, repo, home)
    assert result.returncode == 0, result.stderr
    retries = [e for e in result.events if e["type"] == "model.retry"]
    assert [r["attempt"] for r in retries] == [1, 2, 3]
    assert {r["error_class"] for r in retries} >= {"RateLimitError", "InternalServerError"}
    assert [e["name"] for e in result.events if e["type"] == "tool.finished"].count(
        "edit_file"
    ) == 1


def test_text_output_prints_the_answer_and_json_the_result(scripted_server, tmp_path):
    repo = git_repo(tmp_path / "repo", BUGGY)
    server = scripted_server(native_script())
    text = run_keel(
        "run",
        "--model",
        "openai/any",
        "--api-base",
        server.url,
        "fix it",
        cwd=repo,
        home=tmp_path / "home",
    )
    assert text.returncode == 0, text.stderr
    assert text.stdout.strip() == FINAL
    assert "→ edit_file" in text.stderr

    server = scripted_server([Reply(text="hello")])
    as_json = run_keel(
        "run",
        "--model",
        "openai/any",
        "--api-base",
        server.url,
        "--output-format",
        "json",
        "-",
        stdin="say hello",
        cwd=repo,
        home=tmp_path / "home",
    )
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    assert result["status"] == "completed" and result["final_message"] == "hello"
    assert server.requests[0].messages[-2]["content"] == "say hello"


def test_max_steps_stops_with_exit_3(scripted_server, tmp_path):
    endless = lambda request: Reply(
        tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "calc.py"})]
    )
    server = scripted_server(endless)
    repo = git_repo(tmp_path / "repo", BUGGY)
    result = run_task(server, repo, tmp_path / "home", "--max-steps", "2")
    assert result.returncode == 3, result.stderr
    assert result.events[-1]["status"] == "max_steps"
    assert len(server.requests) == 2


def test_a_reader_that_goes_away_stops_the_run_quietly(scripted_server, tmp_path):
    """`keel run --output-format stream-json ... | head -1`: exit 141 like `git log | head`, no traceback."""
    reader_gone = threading.Event()

    def read_then_answer(request):
        reader_gone.wait(60)  # the first reply comes after the reader has gone
        return Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "calc.py"})])

    server = scripted_server(read_then_answer)
    repo = git_repo(tmp_path / "repo", BUGGY)
    home = tmp_path / "home"
    args = [
        "run",
        "--model",
        "openai/any",
        "--api-base",
        server.url,
        "--output-format",
        "stream-json",
        "fix it",
    ]
    process = subprocess.Popen(
        [KEEL, *args],
        cwd=repo,
        env=keel_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = json.loads(process.stdout.readline())
    process.stdout.close()
    reader_gone.set()
    stderr = process.stderr.read()
    assert process.wait(timeout=60) == 141
    assert first["type"] == "session.started"
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    [log] = (home / "sessions").glob("*.jsonl")
    ended = json.loads(log.read_text().splitlines()[-1])
    assert ended["type"] == "session.finished" and ended["status"] == "interrupted"
    assert (
        len(server.requests) <= 1
    )  # stopped at its next event, not carried on with nobody reading


def test_sessions_count_the_steps_of_every_task(scripted_server, tmp_path):
    read = Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "calc.py"})])
    server = scripted_server(
        [read, Reply(text="first done"), read, read, Reply(text="second done")]
    )
    repo = git_repo(tmp_path / "repo", BUGGY)
    home = tmp_path / "home"
    first = run_task(server, repo, home)
    assert first.returncode == 0 and first.events[-1]["steps"] == 1, first.stderr
    session = first.events[0]["session_id"]
    second = run_task(server, repo, home, "--resume", session)
    assert second.returncode == 0 and second.events[-1]["steps"] == 2, second.stderr

    listed = run_keel("sessions", cwd=repo, home=home)
    [row] = [line for line in listed.stdout.splitlines() if line.startswith(session)]
    assert row.split()[4] == "3"  # ID, date, time, status, STEPS
