"""`keel acp`: a real ACP client (the package's client side) drives the real `keel acp` process against the
scripted model server: initialize, new and load session, streamed updates, permissions, cancel."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    DeniedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)
from keel_cli import KEEL, git_repo, keel_env

from keel.agent.acp.tool_calls import diff_contents
from keel.agent.harness.testing.scripted_server import Reply, ScriptedServer, ScriptedToolCall

CALC = {"calc.py": "def add(a, b):\n    return a - b\n"}
TIMEOUT = 60


class RecordingClient:
    """An editor as a test sees it: it keeps every update and answers permission requests with `answer`."""

    def __init__(self, answer: str | None = "allow_once") -> None:
        self.answer = answer  # an option id, or None: the request is cancelled
        self.updates: list[Any] = []
        self.permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    def on_connect(self, conn: Any) -> None:
        pass

    def text(self) -> str:
        return "".join(u.content.text for u in self.updates if isinstance(u, AgentMessageChunk))

    def kinds(self) -> list[str]:
        """Each update as `tool_call:<status>`, `tool_call_update:<status>`, or its sessionUpdate name."""
        named = []
        for update in self.updates:
            if isinstance(update, ToolCallStart | ToolCallProgress):
                named.append(f"{update.session_update}:{update.status}")
            elif not named or named[-1] != update.session_update:  # a run of chunks counts once
                named.append(update.session_update)
        return named


@asynccontextmanager
async def keel_acp(
    server: ScriptedServer, repo: Path, home: Path, client: RecordingClient, *flags: str
) -> AsyncIterator[ClientSideConnection]:
    """The real `keel acp` process, initialized; its stderr kept in home/acp.err for a failure's report."""
    home.mkdir(parents=True, exist_ok=True)
    with (home / "acp.err").open("a") as err:
        async with spawn_agent_process(
            client,
            KEEL,
            "acp",
            "--model",
            "openai/any",
            "--api-base",
            server.url,
            *flags,
            env=keel_env(home),
            cwd=repo,
            transport_kwargs={"stderr": err.fileno()},
        ) as (conn, _process):
            answer = await asyncio.wait_for(
                conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT
            )
            assert answer.protocol_version == PROTOCOL_VERSION
            assert answer.agent_capabilities is not None
            assert answer.agent_capabilities.load_session
            yield conn


async def ask(conn: ClientSideConnection, session_id: str, text: str) -> Any:
    return await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[text_block(text)]), TIMEOUT
    )


async def requests_reach(server: ScriptedServer, count: int) -> None:
    while len(server.requests) < count:
        await asyncio.sleep(0.02)


def call(name: str, **arguments: Any) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "repo", CALC)


async def test_a_prompt_streams_tool_calls_then_the_answer_in_order(
    scripted_server: Any, repo: Path, tmp_path: Path
) -> None:
    server = scripted_server(
        [
            call("read_file", path="calc.py"),
            call("edit_file", path="calc.py", old_string="a - b", new_string="a + b"),
            "Fixed: add() now adds.",
        ]
    )
    client = RecordingClient()
    async with keel_acp(server, repo, tmp_path / "home", client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        result = await ask(conn, session.session_id, "fix add")

    assert result.stop_reason == "end_turn"
    assert result.usage is not None and result.usage.total_tokens > 0
    assert [k for k in client.kinds() if k != "usage_update"] == [
        "tool_call:pending",
        "tool_call_update:completed",
        "tool_call:pending",
        "tool_call_update:completed",
        "agent_message_chunk",
    ]
    chunks = [u for u in client.updates if isinstance(u, AgentMessageChunk)]
    assert len(chunks) > 1, "the answer is streamed, not sent whole"
    assert client.text() == "Fixed: add() now adds."
    read, edit = [u for u in client.updates if isinstance(u, ToolCallStart)]
    assert (read.kind, read.title) == ("read", "Read calc.py")
    assert read.locations is not None and read.locations[0].path == str(repo / "calc.py")
    assert (edit.kind, edit.raw_input["new_string"]) == ("edit", "a + b")
    diffs = [
        c
        for u in client.updates
        if isinstance(u, ToolCallProgress)
        for c in u.content or []
        if isinstance(c, FileEditToolCallContent)
    ]
    assert [(d.path, "a - b" in (d.old_text or ""), "a + b" in d.new_text) for d in diffs] == [
        (str(repo / "calc.py"), True, True)
    ]
    assert any(isinstance(u, UsageUpdate) and u.size > 0 for u in client.updates)
    assert "a + b" in (repo / "calc.py").read_text()
    assert not client.permissions, "reads and edits need no approval under auto-edit"


@pytest.mark.parametrize(
    ("answer", "runs", "status"),
    [("allow_once", True, "completed"), ("deny", False, "failed"), (None, False, "failed")],
)
async def test_a_command_asks_the_editor_and_its_answer_decides(
    scripted_server: Any,
    repo: Path,
    tmp_path: Path,
    answer: str | None,
    runs: bool,
    status: str,
) -> None:
    server = scripted_server([call("run_command", command="echo ran > ran.txt"), "ok"])
    client = RecordingClient(answer)
    async with keel_acp(server, repo, tmp_path / "home", client, "--approval", "auto-edit") as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        result = await ask(conn, session.session_id, "run it")

    assert result.stop_reason == "end_turn"
    [(asked, options)] = client.permissions
    started = next(u for u in client.updates if isinstance(u, ToolCallStart))
    assert (asked.tool_call_id, asked.title, asked.kind) == (
        started.tool_call_id,
        "echo ran > ran.txt",
        "execute",
    )
    assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
    assert (repo / "ran.txt").exists() == runs
    steps = [k for k in client.kinds() if k.startswith("tool_call")]
    running = ["tool_call_update:in_progress"] if runs else []
    assert steps == ["tool_call:pending", *running, f"tool_call_update:{status}"]
    told = json.dumps(server.requests[-1].messages)
    assert ("Denied" in told) == (not runs)


async def test_cancel_stops_the_turn_and_the_session_takes_the_next_prompt(
    scripted_server: Any, repo: Path, tmp_path: Path
) -> None:
    server = scripted_server(
        [call("read_file", path="calc.py"), Reply(text="too late", delay=60), "next answer"]
    )
    client = RecordingClient()
    async with keel_acp(server, repo, tmp_path / "home", client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        turn = asyncio.create_task(ask(conn, session.session_id, "read and wait"))
        await asyncio.wait_for(requests_reach(server, 2), TIMEOUT)  # the model is on its slow reply
        await conn.cancel(session_id=session.session_id)
        result = await turn
        assert result.stop_reason == "cancelled"
        assert "too late" not in client.text()
        again = await ask(conn, session.session_id, "go on")
    assert again.stop_reason == "end_turn"
    assert client.text().endswith("next answer")


async def test_load_session_replays_the_history_and_goes_on(
    scripted_server: Any, repo: Path, tmp_path: Path
) -> None:
    server = scripted_server([call("read_file", path="calc.py"), "It subtracts.", "Still does."])
    home = tmp_path / "home"
    first = RecordingClient()
    async with keel_acp(server, repo, home, first) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await ask(conn, session.session_id, "what does add do?")

    again = RecordingClient()
    async with keel_acp(server, repo, home, again) as conn:
        await asyncio.wait_for(
            conn.load_session(cwd=str(repo), session_id=session.session_id, mcp_servers=[]),
            TIMEOUT,
        )
        replayed = list(again.updates)
        result = await ask(conn, session.session_id, "and now?")

    assert [k for k in again.kinds()[: len(replayed)]] == [
        "user_message_chunk",
        "tool_call:pending",
        "tool_call_update:completed",
        "agent_message_chunk",
    ]
    assert isinstance(replayed[0], UserMessageChunk)
    assert replayed[0].content.text == "what does add do?"
    assert "It subtracts." in again.text()
    assert result.stop_reason == "end_turn"
    assert "what does add do?" in json.dumps(server.requests[-1].messages)


async def test_unknown_sessions_are_clear_errors(
    scripted_server: Any, repo: Path, tmp_path: Path
) -> None:
    client = RecordingClient()
    async with keel_acp(scripted_server(), repo, tmp_path / "home", client) as conn:
        with pytest.raises(RequestError, match="keel sessions"):
            await conn.load_session(cwd=str(repo), session_id="nope", mcp_servers=[])
        with pytest.raises(RequestError, match="session/new"):
            await ask(conn, "nope", "hi")


def test_stdout_to_a_file_is_a_usage_error_that_says_how_to_run_it(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:
        done = subprocess.run(
            [KEEL, "acp"],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            env=keel_env(tmp_path / "home"),
            cwd=tmp_path,
            timeout=120,
            check=False,
        )
    assert done.returncode == 2
    assert "over pipes" in done.stderr and "Zed" in done.stderr
    assert out.read_text() == ""


def test_the_protocol_package_loads_only_for_keel_acp() -> None:
    probe = (
        "import sys, keel\n"
        "from keel.agent.cli.args import build_parser\n"
        "build_parser().parse_args(['acp', '--model', 'openai/x'])\n"
        "print('acp' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["False"], done.stderr


def test_each_hunk_of_a_diff_becomes_an_acp_diff(tmp_path: Path) -> None:
    diff = (
        "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n"
        "@@ -9 +9,2 @@\n--- not a header\n+++ nor this\n+c\n"
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n\\ No newline at end of file\n"
    )
    assert [(d.path, d.old_text, d.new_text) for d in diff_contents(tmp_path, diff)] == [
        (str(tmp_path / "x.py"), "a = 1\nb = 2\n", "a = 1\nb = 3\n"),
        (str(tmp_path / "x.py"), "-- not a header\n", "++ nor this\nc\n"),
        (str(tmp_path / "new.txt"), None, "hello\n"),
    ]
