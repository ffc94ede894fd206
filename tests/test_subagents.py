"""Subagents end to end: the scripted model calls `task`, a child session runs against the same scripted server,
and its answer, log, tokens and tools are checked; agent definitions in keel's and Claude Code's format."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from keel_cli import git_repo, run_keel, run_streamed
from session_support import until_finished

from keel.agent.core.protocol import (
    ApprovalRequested,
    Approve,
    BudgetUpdated,
    Interrupt,
    SessionStarted,
    SubagentFinished,
    SubagentStarted,
    ToolFinished,
    UserPrompt,
)
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.core.store import read_events, sessions_dir
from keel.agent.core.trust import trust_folder
from keel.agent.harness.rollouts.atif import log_trajectories
from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall, UsageOverride

# Claude Code's example subagent, as its docs write it (front matter, then the prompt)
CLAUDE_REVIEWER = """---
name: reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
---

You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Run git diff to see recent changes
2. Focus on modified files
3. Begin review immediately
"""


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "person"))
    return git_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a + b\n"})


def settings(server, workspace: Path, **overrides) -> SessionSettings:
    return SessionSettings(
        cwd=workspace, model="openai/any", api_base=server.url, retry_base_delay=0.01, **overrides
    )


def used(total: int) -> UsageOverride:
    return UsageOverride(prompt_tokens=total - 10, completion_tokens=10, total_tokens=total)


def call(name: str, **arguments) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)], usage=used(1_000))


def task_call(**arguments) -> Reply:
    arguments.setdefault("description", "find the adder")
    arguments.setdefault("prompt", "Which file defines add? Answer with its path.")
    return call("task", **arguments)


def git_show(repo: Path, what: str) -> str:
    return subprocess.run(
        ["git", "show", what], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def chat_requests(server) -> list:
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


def tool_names(request) -> list[str]:
    return [tool["function"]["name"] for tool in request.tools]


async def run(session: Session, prompt: str) -> list:
    session.submit(UserPrompt(text=prompt))
    return await until_finished(session)


async def test_a_child_session_answers_the_task_call_and_its_tokens_count_in_the_parent_budget(
    scripted_server, workspace
):
    server = scripted_server(
        [
            task_call(),  # the parent: 1,000 tokens
            call("read_file", path="calc.py"),  # the child: 1,000
            Reply(text="add is defined in calc.py, line 1.", usage=used(2_000)),  # the child
            Reply(text="It is calc.py.", usage=used(500)),  # the parent
        ]
    )
    async with Session(settings(server, workspace, budget=100_000)) as parent:
        events = await run(parent, "where is add?")

    started = next(e for e in events if isinstance(e, SubagentStarted))
    finished = next(e for e in events if isinstance(e, SubagentFinished))
    result = next(e for e in events if isinstance(e, ToolFinished) and e.name == "task")
    assert started.child_session_id == finished.child_session_id != parent.id
    assert started.tools == ["read_file", "search", "find_files", "code_map"]
    assert finished.status == "completed" and finished.usage.total_tokens == 3_000
    assert result.ok and "add is defined in calc.py, line 1." in result.output
    assert events[-1].status == "completed" and events[-1].final_message == "It is calc.py."

    # the parent's task paid for the child: 1,000 + 3,000 + 500; the budget it saw after the child shows it
    assert events[-1].task_usage.total_tokens == 4_500
    last_budget = [e for e in events if isinstance(e, BudgetUpdated)][-1]
    assert last_budget.used == 4_500 and last_budget.budget == 100_000

    # the child has its own log in the store, with its own task and its own budget share
    child_log = sessions_dir() / f"{started.child_session_id}.jsonl"
    child_events = read_events(child_log)
    child_start = next(e for e in child_events if isinstance(e, SessionStarted))
    assert child_start.budget == (100_000 - 1_000) // 2
    assert child_events[-1].type == "session.finished" and child_events[-1].status == "completed"
    # and the parent's log links it
    parent_log = read_events(sessions_dir() / f"{parent.id}.jsonl")
    assert started.child_session_id in [
        e.child_session_id for e in parent_log if isinstance(e, SubagentFinished)
    ]

    # its own context: the child's first request holds the task's prompt, not the parent's conversation
    requests = chat_requests(server)
    child_first = requests[1]
    assert "task" in tool_names(requests[0])
    # the parent's model reads what the task has used, the child's tokens included
    after = " ".join(str(m.get("content")) for m in requests[3].messages)
    assert "Tokens used for this task: 4,000 of a 100,000-token budget" in after
    assert tool_names(child_first) == ["read_file", "search", "find_files", "code_map"]
    seen = " ".join(str(m.get("content")) for m in child_first.messages)
    assert "Which file defines add?" in seen and "where is add?" not in seen


async def test_a_read_only_child_is_refused_a_write(scripted_server, workspace):
    server = scripted_server(
        [
            task_call(prompt="Fix calc.py."),
            call("write_file", path="calc.py", content="broken\n"),
            Reply(text="I could not write.", usage=used(100)),
            Reply(text="ok", usage=used(100)),
        ]
    )
    async with Session(settings(server, workspace)) as parent:
        events = await run(parent, "fix it")
    child_id = next(e for e in events if isinstance(e, SubagentStarted)).child_session_id
    child_events = read_events(sessions_dir() / f"{child_id}.jsonl")
    write = next(e for e in child_events if isinstance(e, ToolFinished))
    assert write.name == "write_file" and write.status == "error"
    assert "no tool named 'write_file'" in write.output
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def reviewer_script() -> list[Reply]:
    return [
        task_call(agent="reviewer", description="review calc.py", prompt="Review calc.py."),
        Reply(text="calc.py looks fine.", usage=used(100)),
        Reply(text="Reviewed.", usage=used(100)),
    ]


async def test_a_claude_code_agent_file_is_found_and_used(scripted_server, workspace):
    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "reviewer.md").write_text(CLAUDE_REVIEWER)
    server = scripted_server(reviewer_script())
    async with Session(settings(server, workspace)) as parent:
        events = await run(parent, "review my change")

    requests = chat_requests(server)
    task_schema = next(t for t in requests[0].tools if t["function"]["name"] == "task")
    assert "- reviewer: Expert code review specialist." in task_schema["function"]["description"]
    started = next(e for e in events if isinstance(e, SubagentStarted))
    assert started.agent == "reviewer"
    # Read, Grep, Glob; Bash is withheld: the definition is the repository's, which is not trusted
    assert started.tools == ["read_file", "search", "find_files"]
    child_prompt = " ".join(str(m.get("content")) for m in requests[1].messages)
    assert "You are a senior code reviewer" in child_prompt and "Review calc.py." in child_prompt
    result = next(e for e in events if isinstance(e, ToolFinished) and e.name == "task")
    assert "calc.py looks fine." in result.output
    assert (
        "Not given to it: job_output, run_command" in result.output
        and "keel trust" in result.output
    )


async def test_a_trusted_repository_s_agent_gets_the_tools_it_names(scripted_server, workspace):
    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "reviewer.md").write_text(CLAUDE_REVIEWER)
    trust_folder(workspace)
    server = scripted_server(reviewer_script())
    async with Session(settings(server, workspace)) as parent:
        events = await run(parent, "review my change")
    started = next(e for e in events if isinstance(e, SubagentStarted))
    assert started.tools == ["read_file", "search", "find_files", "run_command", "job_output"]


async def test_an_untrusted_repository_agent_asking_for_write_tools_cannot_write(
    scripted_server, workspace
):
    agents = workspace / ".keel" / "agents"
    agents.mkdir(parents=True)
    (agents / "writer.md").write_text(
        "---\nname: writer\ndescription: writes\ntools: [read_file, write_file, edit_file]\n---\nWrite it.\n"
    )
    server = scripted_server(
        [
            task_call(agent="writer", prompt="Overwrite calc.py."),
            call("write_file", path="calc.py", content="pwned\n"),
            Reply(text="done", usage=used(100)),
            Reply(text="ok", usage=used(100)),
        ]
    )
    async with Session(settings(server, workspace)) as parent:
        events = await run(parent, "go")
    started = next(e for e in events if isinstance(e, SubagentStarted))
    assert started.tools == ["read_file"]
    child_events = read_events(sessions_dir() / f"{started.child_session_id}.jsonl")
    write = next(e for e in child_events if isinstance(e, ToolFinished))
    assert write.name == "write_file" and write.status == "error"
    result = next(e for e in events if isinstance(e, ToolFinished) and e.name == "task")
    assert "Not given to it: edit_file, write_file" in result.output
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


async def test_a_person_s_agent_in_its_own_worktree_leaves_the_checkout_alone(
    scripted_server, workspace, tmp_path
):
    agents = tmp_path / "config" / "keel" / "agents"
    agents.mkdir(parents=True)
    (agents / "fixer.md").write_text(
        "---\nname: fixer\ndescription: fixes things\ntools: Read, Write\nisolation: worktree\n---\n"
        "Fix what you are asked to.\n"
    )
    server = scripted_server(
        [
            task_call(agent="fixer", prompt="Add sub.py with a sub function."),
            call("write_file", path="sub.py", content="def sub(a, b):\n    return a - b\n"),
            Reply(text="Added sub.", usage=used(100)),
            Reply(text="ok", usage=used(100)),
        ]
    )
    async with Session(settings(server, workspace)) as parent:
        events = await run(parent, "add sub")
    started = next(e for e in events if isinstance(e, SubagentStarted))
    finished = next(e for e in events if isinstance(e, SubagentFinished))
    assert started.tools == ["read_file", "write_file"] and started.worktree
    assert not Path(started.worktree).exists()  # removed; its work is on the branch
    assert not (workspace / "sub.py").exists()
    assert finished.branch
    assert git_show(workspace, f"{finished.branch}:sub.py") == "def sub(a, b):\n    return a - b\n"
    result = next(e for e in events if isinstance(e, ToolFinished) and e.name == "task")
    assert finished.branch in result.output


async def test_an_unknown_agent_name_is_an_error_the_model_can_fix(scripted_server, workspace):
    server = scripted_server([task_call(agent="nobody"), Reply(text="ok", usage=used(100))])
    async with Session(settings(server, workspace)) as parent:
        events = await run(parent, "go")
    result = next(e for e in events if isinstance(e, ToolFinished) and e.name == "task")
    assert result.status == "error" and "no agent named 'nobody'" in result.output
    assert not any(isinstance(e, SubagentStarted) for e in events)


async def test_the_atif_export_links_the_task_call_to_the_child_s_trajectory(
    scripted_server, workspace
):
    server = scripted_server(
        [task_call(), Reply(text="calc.py", usage=used(300)), Reply(text="ok", usage=used(100))]
    )
    async with Session(settings(server, workspace)) as parent:
        events = await run(parent, "where is add?")
    child_id = next(e for e in events if isinstance(e, SubagentStarted)).child_session_id
    (trajectory,) = log_trajectories(sessions_dir() / f"{parent.id}.jsonl")
    results = [r for s in trajectory.steps if s.observation for r in s.observation.results]
    (ref,) = results[0].subagent_trajectory_ref
    assert ref.trajectory_path == f"{child_id}.json" and ref.session_id == child_id
    assert ref.extra["usage"]["total_tokens"] == 300
    (child,) = log_trajectories(sessions_dir() / f"{child_id}.jsonl")
    assert child.session_id == child_id


def test_keel_run_streams_the_subagent_events_and_keel_sessions_lists_the_child(
    scripted_server, workspace, tmp_path
):
    once = [task_call(), Reply(text="calc.py", usage=used(300)), Reply(text="ok", usage=used(100))]
    server = scripted_server(once + once)
    home = tmp_path / "cli-home"
    result = run_streamed(server.url, "where is add?", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    types = result.types()
    assert types.index("subagent.started") < types.index("subagent.finished")
    child = next(e for e in result.events if e["type"] == "subagent.finished")
    assert child["status"] == "completed" and child["usage"]["total_tokens"] == 300
    listed = run_keel("sessions", cwd=workspace, home=home)
    assert child["child_session_id"] in listed.stdout
    text = run_keel(
        "run", "--model", "openai/any", "--api-base", server.url, "again?", cwd=workspace, home=home
    )
    assert text.returncode == 0 and text.stdout.strip() == "ok"
    assert "keel: subagent helper started (" in text.stderr
    assert "keel: subagent helper completed (" in text.stderr


def test_keel_run_help_describes_subagents(tmp_path):
    shown = " ".join(run_keel("run", "--help", cwd=tmp_path, home=tmp_path).stdout.split())
    assert "Subagents:" in shown and ".claude/agents/*.md" in shown


async def test_interrupting_the_parent_stops_the_child_and_still_counts_what_it_used(
    scripted_server, workspace
):
    server = scripted_server(
        [
            task_call(),
            call("read_file", path="calc.py"),
            Reply(text="word " * 400, chunk_delay=0.02, usage=used(100)),
        ]
    )
    async with Session(settings(server, workspace)) as parent:
        parent.submit(UserPrompt(text="where is add?"))

        def interrupt_once_the_child_works(event) -> None:
            if isinstance(event, SubagentStarted):
                asyncio.get_running_loop().call_later(0.5, parent.submit, Interrupt())

        events = await until_finished(parent, interrupt_once_the_child_works)
    assert events[-1].status == "interrupted"
    finished = next(e for e in events if isinstance(e, SubagentFinished))
    assert finished.status == "interrupted" and finished.usage.total_tokens == 1_000
    assert events[-1].task_usage.total_tokens == 2_000  # the parent's call and the child's first
    child_events = read_events(sessions_dir() / f"{finished.child_session_id}.jsonl")
    assert child_events[-1].type == "session.finished"
    assert child_events[-1].status == "interrupted"


async def test_a_child_s_command_is_approved_by_the_parent_s_person(
    scripted_server, workspace, tmp_path
):
    agents = tmp_path / "config" / "keel" / "agents"
    agents.mkdir(parents=True)
    (agents / "tester.md").write_text("---\nname: tester\ntools: Read, Bash\n---\nRun the tests.\n")
    server = scripted_server(
        [
            task_call(agent="tester", prompt="Run echo."),
            call("run_command", command="echo from-the-child"),
            Reply(text="It printed from-the-child.", usage=used(100)),
            Reply(text="ok", usage=used(100)),
        ]
    )
    asked = []
    own = settings(server, workspace, interactive=True, approval="auto-edit")
    async with Session(own) as parent:
        parent.submit(UserPrompt(text="run it"))

        def approve(event) -> None:
            if isinstance(event, ApprovalRequested):
                asked.append(event)
                parent.submit(Approve(call_id=event.call_id, decision="allow_once"))

        events = await until_finished(parent, approve)
    child_id = next(e for e in events if isinstance(e, SubagentStarted)).child_session_id
    assert [(a.name, a.call_id.startswith(f"{child_id}/")) for a in asked] == [
        ("run_command", True)
    ]
    child_events = read_events(sessions_dir() / f"{child_id}.jsonl")
    ran = next(e for e in child_events if isinstance(e, ToolFinished))
    assert ran.status == "ok" and "from-the-child" in ran.output
    assert events[-1].status == "completed"
