"""The session log and its store under faults, through the real `keel run` / `keel sessions` processes: a full
disk or a file-size limit, a log killed before its task was recorded, a killed session's counts, two processes
on one session, and a huge line in a log."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from keel_cli import KEEL, git_repo, keel_env, run_keel, run_streamed

from keel.agent.core.protocol import SessionStarted
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall

LONG_ANSWER = "The answer, at length. " * 2000  # ~46 KB: needs fresh blocks of the log file


def log_of(home: Path, session_id: str) -> Path:
    return home / "sessions" / f"{session_id}.jsonl"


def log_lines(path: Path) -> list[dict[str, object]]:
    """Every line of a log, each of which must be a whole JSON object."""
    data = path.read_bytes()
    assert data.endswith(b"\n"), data[-200:]
    return [json.loads(line) for line in data.splitlines()]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs to hold $KEEL_HOME (the machines and CI run as root); skipped where mounting is refused."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(directory: Path) -> Path:
    """Take every free block of the file system under `directory`."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as file:
        for size in (1 << 16, 4096, 512, 1):
            try:
                while True:
                    file.write(b"\0" * size)
            except OSError:
                continue
    return filler


def test_a_full_disk_stops_the_run_with_one_error_and_the_log_intact(scripted_server, small_disk):
    home = small_disk / "home"
    asked: list[int] = []

    def fill_then_answer(request: ChatRequest) -> Reply:
        if not asked:  # the disk fills while the model thinks: the reply cannot be logged
            fill(small_disk)
        asked.append(1)
        return Reply(text=LONG_ANSWER if len(asked) == 1 else "resumed and done")

    server = scripted_server(fill_then_answer)
    repo = git_repo(small_disk.parent / "repo", {"a.txt": "a\n"})
    flags = ("run", "--model", "openai/any", "--api-base", server.url)
    result = run_keel(*flags, "answer at length", cwd=repo, home=home, timeout=90)

    assert result.returncode == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "No space left on device" in errors[0], result.stderr
    assert errors[0].count("keel run --resume") == 1  # the one way on, said once
    session_id = errors[0].rsplit("keel run --resume ", 1)[1].strip()
    lines = log_lines(log_of(home, session_id))
    assert [e["type"] for e in lines][:1] == ["session.started"]
    assert any(e["type"] == "user.message" for e in lines)
    assert not any(e["type"] == "assistant.message" for e in lines)  # the failed write left nothing

    (small_disk / "filler").unlink()
    resumed = run_keel(*flags, "--resume", session_id, cwd=repo, home=home, timeout=90)
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed and done" in resumed.stdout


@pytest.mark.parametrize("output", ["text", "stream-json"])
def test_a_file_size_limit_stops_the_run_with_one_error_and_the_log_intact(
    scripted_server, tmp_path, output
):
    """EFBIG (RLIMIT_FSIZE, with SIGXFSZ ignored as Python does) instead of a full disk: no root needed."""
    server = scripted_server([Reply(text=LONG_ANSWER)])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    proc = subprocess.run(
        [KEEL, "run", "--model", "openai/any", "--api-base", server.url]
        + ["--output-format", output, "answer at length"],
        cwd=repo,
        env=keel_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
        preexec_fn=limit_file_size,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "File too large" in errors[0], proc.stderr
    if output == "stream-json":
        events = [json.loads(line) for line in proc.stdout.splitlines()]
        assert [e["error_class"] for e in events if e["type"] == "error"] == ["SessionLogError"]
        assert events[-1]["type"] == "session.finished" and events[-1]["status"] == "error"
    (log,) = (home / "sessions").glob("*.jsonl")
    lines = log_lines(log)
    assert lines[0]["type"] == "session.started"
    assert not any(e["type"] == "assistant.message" for e in lines)


def wait_for_file(name: str) -> ScriptedToolCall:
    """A command that runs until the test creates `name` in the workspace."""
    command = f"while [ ! -e {name} ]; do sleep 0.05; done; echo released"
    return ScriptedToolCall(name="run_command", arguments={"command": command, "timeout": 100})


def start_streamed(api_base: str, *args: str, cwd: Path, home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [KEEL, "run", "--model", "openai/any", "--api-base", api_base]
        + ["--output-format", "stream-json", *args],
        cwd=cwd,
        env=keel_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def read_until(proc: subprocess.Popen[str], event_type: str) -> list[dict[str, object]]:
    """stream-json events until (and with) the first of `event_type`."""
    assert proc.stdout is not None
    events: list[dict[str, object]] = []
    while line := proc.stdout.readline():
        events.append(json.loads(line))
        if events[-1]["type"] == event_type:
            return events
    raise AssertionError(f"no {event_type} before the end: {events}")


def test_a_second_process_on_a_running_session_is_refused(scripted_server, tmp_path):
    server = scripted_server(
        ["first task done", Reply(tool_calls=[wait_for_file("release")]), "second task done"]
    )
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"
    first = run_streamed(server.url, "first task", cwd=repo, home=home)
    assert first.returncode == 0, first.stderr
    session_id = str(first.events[0]["session_id"])

    running = start_streamed(server.url, "--resume", session_id, "second task", cwd=repo, home=home)
    try:
        read_until(running, "tool.started")  # the resumed run is busy in its command
        second = run_streamed(
            server.url, "--resume", session_id, "a rival task", cwd=repo, home=home
        )
        assert second.returncode == 2, second.stderr
        assert second.stdout == ""
        (line,) = second.stderr.splitlines()
        assert f"session {session_id} is open in another keel process" in line
        (repo / "release").touch()
        out, err = running.communicate(timeout=90)
    finally:
        if running.poll() is None:
            os.killpg(running.pid, signal.SIGKILL)
            running.wait()
    assert running.returncode == 0, err
    assert json.loads(out.splitlines()[-1])["final_message"] == "second task done"
    events = log_lines(log_of(home, session_id))
    prompts = [e["text"] for e in events if e["type"] == "user.message"]
    assert prompts == ["first task", "second task"]  # nothing of the rival in the log
    assert [e["type"] for e in events].count("session.started") == 2
    assert len(server.requests) == 3


@pytest.mark.parametrize("written", ["nothing", "session.started only"])
def test_a_session_killed_before_its_task_is_listed_and_not_resumed(
    scripted_server, tmp_path, written
):
    """`kill -9` in a session's first second leaves a log with no task: an empty file, or its first event."""
    server = scripted_server(["should never be asked"])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"
    session_id = "20261126-120000-abc123"
    log = log_of(home, session_id)
    log.parent.mkdir(parents=True)
    started = SessionStarted(
        session_id=session_id,
        model="openai/any",
        cwd=str(repo),
        context_window=32768,
        tool_protocol="native",
        approval="full-auto",
    )
    log.write_text("" if written == "nothing" else started.model_dump_json() + "\n")
    before = log.read_bytes()

    listed = run_keel("sessions", cwd=repo, home=home)
    assert listed.returncode == 0, listed.stderr
    (row,) = [line for line in listed.stdout.splitlines() if line.startswith(session_id)]
    assert ("empty" if written == "nothing" else "unfinished") in row

    resumed = run_streamed(server.url, "--resume", session_id, cwd=repo, home=home)
    assert resumed.returncode == 2, resumed.stderr
    (line,) = resumed.stderr.splitlines()
    assert f"session {session_id} has no task to continue" in line
    assert server.requests == []
    assert log.read_bytes() == before  # refused before anything was written

    given = run_streamed(server.url, "--resume", session_id, "the task, again", cwd=repo, home=home)
    assert given.returncode == 0, given.stderr
    assert given.events[-1]["final_message"] == "should never be asked"


def test_sessions_counts_the_steps_and_tokens_of_a_killed_session(scripted_server, tmp_path):
    read = ScriptedToolCall(name="read_file", arguments={"path": "a.txt"})
    server = scripted_server([Reply(tool_calls=[read]), Reply(tool_calls=[wait_for_file("never")])])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"
    proc = start_streamed(server.url, "read, then wait", cwd=repo, home=home)
    try:
        events = read_until(proc, "tool.started")
        events += read_until(proc, "tool.started")  # the second step is running
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    replies = [e for e in events if e["type"] == "assistant.message"]
    spent = replies[-1]["session_usage"]["total_tokens"]  # type: ignore[index]
    assert len(replies) == 2 and spent > 0

    listed = run_keel("sessions", cwd=repo, home=home)
    session_id = events[0]["session_id"]
    (row,) = [line for line in listed.stdout.splitlines() if line.startswith(str(session_id))]
    status, steps, tokens = row.split()[3:6]
    assert (status, int(steps), int(tokens)) == ("unfinished", 2, spent)


def test_a_huge_line_in_a_log_is_cut_on_resume_to_fit_the_window(scripted_server, tmp_path):
    """A 12 MB task prompt (over the line bound) and a 2 MB tool output (under it) in a log: the resume
    loads a bounded part of each, cut with a note, and no request exceeds the 32k window."""
    read = ScriptedToolCall(name="read_file", arguments={"path": "a.txt"})
    server = scripted_server(
        [Reply(tool_calls=[read]), "first done"], fallback="resumed done", context_limit=32_768
    )
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    home = tmp_path / "home"
    window = ("--context-window", "32768")
    first = run_streamed(server.url, *window, "read a", cwd=repo, home=home)
    assert first.returncode == 0, first.stderr
    session_id = str(first.events[0]["session_id"])
    log = log_of(home, session_id)
    events = log_lines(log)
    for event in events:  # as an old session with a huge prompt and a huge output left its log
        if event["type"] == "user.message":
            event["text"] = "Do this: " + "y" * 12_000_000
        if event["type"] == "tool.finished":
            event["output"] = "o" * 2_000_000
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    asked_before = len(server.requests)

    resumed = run_streamed(server.url, *window, "--resume", session_id, cwd=repo, home=home)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.events[-1]["final_message"] == "resumed done"
    requests = server.requests[asked_before:]
    assert requests and all(r.prompt_tokens <= 32_768 and r.fault is None for r in requests)
    sent = json.dumps(requests[-1].messages)
    assert "Do this: yyy" in sent and sent.count("keel cut") >= 2  # the prompt and the output


def test_a_line_over_the_bound_is_read_in_part_and_kept_with_a_note(tmp_path):
    from keel.agent.core.log_lines import read_line_events
    from keel.agent.core.protocol import (
        AssistantMessage,
        ToolCall,
        ToolFinished,
        TurnTokens,
        UserMessage,
    )

    lines = [
        UserMessage(text="p" * 5000).model_dump_json(),
        ToolFinished(call_id="c1", name="read_file", output="o" * 5000, ok=False).model_dump_json(),
        AssistantMessage(text="short", tool_calls=[ToolCall(id="c2", name="x")]).model_dump_json()[
            :-1
        ]
        + ',"tokens":'
        + TurnTokens(prompt_token_ids=list(range(3000))).model_dump_json()
        + "}",
        '{"type":"budget.set","budget":' + "1" * 5000 + "}",  # cut in a number: dropped
        UserMessage(text="after").model_dump_json(),
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with open(path, "rb") as file:
        events = read_line_events(file, limit=1000)
    user, tool, reply, after = events
    assert isinstance(user, UserMessage) and user.text.startswith("p" * 900)
    assert "keel cut" in user.text and len(user.text) < 1200
    assert isinstance(tool, ToolFinished) and (tool.call_id, tool.ok) == ("c1", False)
    assert "keel cut" in tool.output
    assert (
        isinstance(reply, AssistantMessage) and reply.tokens is None
    )  # token ids never kept in part
    assert [c.id for c in reply.tool_calls] == ["c2"]
    assert isinstance(after, UserMessage) and after.text == "after"


def test_a_resumed_text_over_a_quarter_of_the_window_is_cut_to_fit_it():
    from keel.agent.core.context.bounds import bound_events, token_limit
    from keel.agent.core.model.tokens import count_text
    from keel.agent.core.protocol import UserMessage

    small, large = UserMessage(text="word " * 1000), UserMessage(text="word " * 100_000)
    kept, cut = bound_events([small, large], 32_768)
    assert kept is small  # within the bound: the very event, uncounted and uncut
    assert isinstance(cut, UserMessage) and "keel cut" in cut.text
    assert token_limit(32_768) * 0.7 <= count_text(cut.text) <= token_limit(32_768)
