"""Self-summarization when the context fills, and per-task token budgets, through the real `keel run`."""

from __future__ import annotations

import json
from pathlib import Path

from keel_cli import git_repo, run_keel, run_streamed

from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall

SUMMARY_MARK = "You are summarizing your own work"


def is_summary_request(request: ChatRequest) -> bool:
    return bool(request.messages) and SUMMARY_MARK in str(request.messages[0].get("content"))


def big_repo(path: Path, files: int = 20, lines: int = 120) -> Path:
    """A repo of files large enough that reading a few of them fills a small context window."""
    return git_repo(
        path,
        {
            f"mod{i}.py": "".join(
                f"def f{i}_{j}(x):\n    return x * {j}  # filler line\n" for j in range(lines // 2)
            )
            for i in range(files)
        },
    )


class LongSession:
    """A scripted model that reads a file per step for `steps` steps, then answers; it summarizes when asked."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.done = 0
        self.summaries = 0

    def __call__(self, request: ChatRequest) -> Reply:
        if is_summary_request(request):
            self.summaries += 1
            return Reply(
                text=f"## Goal\nRead every module.\n## Done\nRead {self.done} files (summary {self.summaries})."
            )
        if self.done >= self.steps:
            return Reply(text="Read them all.")
        self.done += 1
        path = f"mod{self.done % 20}.py"
        return Reply(
            tool_calls=[
                ScriptedToolCall(
                    name="read_file", arguments={"path": path, "limit": 40 + self.done % 7}
                )
            ]
        )


def test_long_session_summarizes_and_never_overflows(scripted_server, tmp_path):
    script = LongSession(steps=60)
    server = scripted_server(script, context_limit=8000)
    repo = big_repo(tmp_path / "repo")
    home = tmp_path / "home"
    result = run_keel(
        "run",
        "--model",
        "openai/any",
        "--api-base",
        server.url,
        "--context-window",
        "8000",
        "--output-format",
        "stream-json",
        "--budget",
        "10000000",
        "read every module",
        cwd=repo,
        home=home,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    faults = [r.fault for r in server.requests if r.fault]
    assert faults == [], f"requests over the window: {faults}"
    assert max(r.prompt_tokens for r in server.requests) <= 8000
    summary_requests = [
        r for r in server.requests if SUMMARY_MARK in str(r.messages[0].get("content"))
    ]
    assert script.summaries >= 1 and len(summary_requests) == script.summaries
    assert all(r.prompt_tokens <= 8000 for r in summary_requests)
    assert result.events[-1]["status"] == "completed" and result.events[-1]["steps"] == 60
    summarized = [e for e in result.events if e["type"] == "context.summarized"]
    assert len(summarized) == script.summaries
    assert all(e["tokens_after"] < e["tokens_before"] for e in summarized)
    # the summaries are in the session log, and the task survives every summary verbatim
    log = next((home / "sessions").glob("*.jsonl")).read_text()
    assert log.count('"type":"context.summarized"') == script.summaries
    after_summary = server.requests[-1].messages
    assert any("read every module" in str(m.get("content")) for m in after_summary[:3])
    print(
        f"\n60 steps, {script.summaries} summaries, largest request {max(r.prompt_tokens for r in server.requests)} tokens"
    )


def test_budget_stops_cleanly_and_resumes(scripted_server, tmp_path):
    endless = lambda request: Reply(
        tool_calls=[
            ScriptedToolCall(
                name="read_file",
                arguments={"path": f"mod{len(request.messages) % 20}.py", "limit": 30},
            )
        ]
    )
    server = scripted_server(endless)
    repo = big_repo(tmp_path / "repo")
    home = tmp_path / "home"
    result = run_streamed(
        server.url,
        "--budget",
        "20000",
        "explore forever",
        cwd=repo,
        home=home,
    )
    assert result.returncode == 3, result.stderr[-2000:]
    end = result.events[-1]
    assert end["status"] == "budget_exhausted"
    used = end["usage"]["total_tokens"]
    last_call = [e for e in result.events if e["type"] == "assistant.message"][-1]["usage"][
        "total_tokens"
    ]
    assert 20000 <= used <= 20000 + last_call
    for request in server.requests:  # the budget line reached the model on every turn
        assert "of a 20,000-token budget" in request.messages[-1]["content"]
    notes = [r.messages[-1]["content"] for r in server.requests]
    assert "Converge" not in notes[0] and "Wrap up" not in notes[0]
    assert "Wrap up now" in notes[-1]  # the last call the budget allowed was told to report
    updates = [e for e in result.events if e["type"] == "budget.updated"]
    assert updates and updates[-1]["used"] == used and updates[-1]["budget"] == 20000

    calls_before = len(server.requests)
    server_2 = scripted_server(["Finished exploring."])
    resumed = run_streamed(
        server_2.url,
        "--resume",
        end_session_id(result),
        "--budget",
        "50000",
        cwd=repo,
        home=home,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert resumed.events[0]["resumed"] is True
    assert resumed.events[-1]["final_message"] == "Finished exploring."
    history = server_2.requests[0].messages
    assert (
        sum(1 for m in history if m["role"] == "tool") == calls_before
    )  # continued from where it stopped
    assert calls_before > 3


def end_session_id(result) -> str:
    return result.events[0]["session_id"]


def test_loop_guard_warns_then_stops(scripted_server, tmp_path):
    same = lambda request: Reply(
        tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "mod1.py", "limit": 5})]
    )
    server = scripted_server(same)
    repo = big_repo(tmp_path / "repo", files=2)
    result = run_streamed(
        server.url,
        "loop",
        cwd=repo,
        home=tmp_path / "home",
    )
    assert result.returncode == 3
    assert result.events[-1]["status"] == "loop_detected"
    outputs = [e["output"] for e in result.events if e["type"] == "tool.finished"]
    assert len(outputs) == 4
    assert "3 times in a row" in outputs[2] and "4 times in a row" in outputs[3]
    assert "times in a row" not in outputs[1]


def test_the_loop_guard_counts_within_a_task_not_across_tasks(
    scripted_server, tmp_path, monkeypatch
):
    """One session, six tasks, each reading the same file once and answering: no warning, no stop."""
    import asyncio

    from keel.agent.core.protocol import TaskFinished, ToolFinished, UserPrompt
    from keel.agent.core.session import Session
    from keel.agent.core.settings import SessionSettings

    read = ScriptedToolCall(name="read_file", arguments={"path": "mod1.py", "limit": 5})
    server = scripted_server([Reply(tool_calls=[read]), Reply(text="It defines f.")] * 6)
    repo = big_repo(tmp_path / "repo", files=2)
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))

    async def drive() -> list:
        seen = []
        settings = SessionSettings(cwd=repo, model="openai/any", api_base=server.url)
        async with Session(settings) as session:
            for number in range(6):
                session.submit(UserPrompt(text=f"question {number}: what is in mod1.py?"))
                async for event in session.events():
                    seen.append(event)
                    if isinstance(event, TaskFinished):
                        break
        return seen

    seen = asyncio.run(drive())
    assert [e.status for e in seen if isinstance(e, TaskFinished)] == ["completed"] * 6
    outputs = [e.output for e in seen if isinstance(e, ToolFinished)]
    assert len(outputs) == 6 and not any("times in a row" in output for output in outputs)


def test_compact_op_summarizes_on_request(scripted_server, tmp_path):
    import asyncio
    import os

    from keel.agent.core.protocol import Compact, ContextSummarized, TaskFinished, UserPrompt
    from keel.agent.core.session import Session
    from keel.agent.core.settings import SessionSettings

    script = LongSession(steps=3)
    server = scripted_server(script)
    repo = big_repo(tmp_path / "repo", files=4)
    os.environ["KEEL_HOME"] = str(tmp_path / "home")

    async def drive() -> list:
        seen = []
        settings = SessionSettings(cwd=repo, model="openai/any", api_base=server.url)
        async with Session(settings) as session:
            session.submit(UserPrompt(text="read some modules"))
            session.submit(Compact())
            async for event in session.events():
                seen.append(event)
                if isinstance(event, ContextSummarized):
                    break
        return seen

    try:
        seen = asyncio.run(drive())
    finally:
        del os.environ["KEEL_HOME"]
    finished = next(e for e in seen if isinstance(e, TaskFinished))
    summarized = seen[-1]
    assert finished.status == "completed"
    assert summarized.reason == "requested" and "Read 3 files" in summarized.summary
    assert summarized.tokens_after < summarized.tokens_before
    assert json.loads(summarized.model_dump_json())["type"] == "context.summarized"


def test_without_a_budget_the_task_gets_an_estimate(scripted_server, tmp_path):
    server = scripted_server(["hi"])
    repo = big_repo(tmp_path / "repo", files=3)
    result = run_streamed(server.url, "say hi", cwd=repo, home=tmp_path / "home")
    assert result.returncode == 0
    from keel.agent.core.context.budget import auto_budget

    expected = auto_budget("say hi", 3)
    assert f"of a {expected:,}-token budget" in server.requests[0].messages[-1]["content"]
