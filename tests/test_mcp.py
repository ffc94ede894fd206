"""MCP servers' tools: a real SDK server (tests/mcp_test_server.py) over stdio and streamable HTTP, driven by a
scripted model through a real Session and the real `keel` CLI; the server records each call it gets."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from keel_cli import KEEL, git_repo, keel_env, run_keel, run_streamed
from session_support import until_finished

from keel.agent.core.config import load_file
from keel.agent.core.errors import ConfigError
from keel.agent.core.protocol import Error, ToolFinished, UserPrompt
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall
from keel.tools.exec.sandbox_policy import SandboxMode, SandboxPolicy
from keel.tools.mcp.config import McpServerConfig
from keel.tools.mcp.tool import render_result, tool_name

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))
UNCONFINED = SandboxPolicy(mode=SandboxMode.FULL_ACCESS)


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", {"notes.txt": "one\n"})


def stdio_server(calls: Path, **options: object) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[SERVER, str(calls)], **options)  # type: ignore[arg-type]


def recorded(calls: Path) -> list[dict[str, object]]:
    """The calls the server got, in order."""
    if not calls.exists():
        return []
    return [json.loads(line) for line in calls.read_text().splitlines()]


def alive(pid_file: Path) -> bool:
    pid = int(pid_file.read_text())
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def ended_soon(pid_file: Path, seconds: float = 10.0) -> bool:
    """Whether the process is gone within `seconds`: a sandbox's pid namespace is torn down after its init
    exits, asynchronously, so a process killed with it may still be exiting when the session has closed."""
    deadline = time.monotonic() + seconds
    while alive(pid_file):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


async def run_session(server, workspace: Path, servers: dict[str, McpServerConfig], **overrides):
    """One task in a session with these MCP servers; its events, after the session has closed.

    The servers run unconfined unless a test says otherwise, so the pids they record are the host's
    (tests/security/test_sec_mcp_sandbox.py runs them in the sandbox)."""
    overrides.setdefault("sandbox", UNCONFINED)
    settings = SessionSettings(
        cwd=workspace,
        model="openai/any",
        api_base=server.url,
        retry_base_delay=0.01,
        mcp_servers=servers,
        **overrides,
    )
    async with Session(settings) as session:
        session.submit(UserPrompt(text="use the tools"))
        return await until_finished(session)


def finished(events) -> list[ToolFinished]:
    return [e for e in events if isinstance(e, ToolFinished)]


async def test_a_session_calls_a_stdio_server_tool_sees_its_result_and_stops_the_server(
    scripted_server, workspace, tmp_path
):
    calls = tmp_path / "calls.jsonl"
    server = scripted_server([call("mcp__t__add", a=2, b=3), "the sum is five"])
    events = await run_session(server, workspace, {"t": stdio_server(calls)})
    [result] = finished(events)
    assert (result.name, result.status, result.output) == ("mcp__t__add", "ok", "the sum is 5")
    assert recorded(calls) == [{"tool": "add", "arguments": {"a": 2, "b": 3}}]
    offered = {tool["function"]["name"]: tool["function"] for tool in server.requests[0].tools}
    assert offered["mcp__t__add"]["parameters"]["required"] == ["a", "b"]
    assert "Add two integers" in offered["mcp__t__add"]["description"]
    assert {"mcp__t__note", "read_file", "run_command"} <= set(offered)
    tool_message = next(m for m in server.requests[1].messages if m["role"] == "tool")
    assert "the sum is 5" in tool_message["content"]
    assert not alive(Path(f"{calls}.pid"))  # the session's close ended the server


async def test_what_a_server_started_ends_with_the_session(scripted_server, workspace, tmp_path):
    calls = tmp_path / "calls.jsonl"
    server = scripted_server([call("mcp__t__add", a=1, b=1), "two"])
    config = McpServerConfig(command=sys.executable, args=[SERVER, str(calls), "--child"])
    events = await run_session(server, workspace, {"t": config})
    assert finished(events)[0].output == "the sum is 2"
    assert not alive(Path(f"{calls}.pid"))
    # its own session, so no process group kill reached it
    assert ended_soon(Path(f"{calls}.child"))


@pytest.fixture
def http_server(tmp_path) -> Iterator[tuple[str, Path]]:
    """The test server over streamable HTTP on 127.0.0.1: its /mcp url and its calls file."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    calls = tmp_path / "http-calls.jsonl"
    process = subprocess.Popen(
        [sys.executable, SERVER, str(calls), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):  # until it listens (or 20 s)
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", calls
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_a_session_calls_a_streamable_http_server_tool(
    scripted_server, workspace, http_server
):
    url, calls = http_server
    server = scripted_server([call("mcp__web__note", text="hello", title="greeting"), "noted"])
    events = await run_session(server, workspace, {"web": McpServerConfig(url=url)})
    [result] = finished(events)
    assert (result.status, result.output) == ("ok", "noted: greeting")
    assert recorded(calls) == [
        {"tool": "note", "arguments": {"text": "hello", "title": "greeting"}}
    ]


async def test_bad_arguments_get_the_schema_error_and_never_reach_the_server(
    scripted_server, workspace, tmp_path
):
    calls = tmp_path / "calls.jsonl"
    server = scripted_server(
        [call("mcp__t__add", a="two"), call("mcp__t__note", text="fail"), "ok"]
    )
    events = await run_session(server, workspace, {"t": stdio_server(calls)})
    bad, failing = finished(events)
    assert bad.status == "error"
    assert "invalid arguments for mcp__t__add" in bad.output
    assert "'b' is a required property" in bad.output
    assert "a: 'two' is not of type 'integer'" in bad.output
    assert '"required":["a","b"]' in bad.output  # the schema, so the model can send the call right
    # the server's own error comes back as a failed tool result
    assert failing.status == "error" and failing.output.startswith("Error:")
    assert recorded(calls) == [{"tool": "note", "arguments": {"text": "fail", "title": ""}}]


async def test_read_only_approval_denies_a_server_tool_before_it_reaches_the_server(
    scripted_server, workspace, tmp_path
):
    calls, reads = tmp_path / "calls.jsonl", tmp_path / "reads.jsonl"
    servers = {"w": stdio_server(calls), "r": stdio_server(reads, read_only=True)}
    script = [call("mcp__w__note", text="x"), call("mcp__r__note", text="y"), "done"]
    server = scripted_server(script)
    events = await run_session(server, workspace, servers, approval="read-only")
    denied, allowed = finished(events)
    assert denied.status == "denied" and "does not allow exec tools" in denied.output
    assert allowed.status == "ok"  # configured read_only: a read tool
    assert recorded(calls) == []
    assert recorded(reads) == [{"tool": "note", "arguments": {"text": "y", "title": ""}}]


async def test_a_read_only_sandbox_refuses_a_server_tool_that_is_not_read_only(
    scripted_server, workspace, tmp_path
):
    calls = tmp_path / "calls.jsonl"
    server = scripted_server([call("mcp__t__add", a=1, b=1), "done"])
    sandbox = SandboxPolicy(mode=SandboxMode.READ_ONLY)
    events = await run_session(server, workspace, {"t": stdio_server(calls)}, sandbox=sandbox)
    [refused] = finished(events)
    assert refused.status == "error" and "the sandbox is read-only" in refused.output
    assert recorded(calls) == []


async def test_a_server_that_does_not_start_is_one_notice_and_the_task_goes_on(
    scripted_server, workspace, tmp_path
):
    calls = tmp_path / "calls.jsonl"
    servers = {
        "ghost": McpServerConfig(command="keel-no-such-mcp-server"),
        "t": stdio_server(calls),
    }
    server = scripted_server([call("mcp__t__add", a=1, b=2), "three"])
    events = await run_session(server, workspace, servers)
    [notice] = [e for e in events if isinstance(e, Error)]
    assert notice.error_class == "McpServerError" and not notice.fatal
    assert "'ghost' did not start" in notice.message and "no such program" in notice.message
    assert events[-1].status == "completed" and events[-1].final_message == "three"
    offered = {tool["function"]["name"] for tool in server.requests[0].tools}
    assert "mcp__t__add" in offered and not any("ghost" in name for name in offered)


def write_config(workspace: Path, text: str) -> None:
    """The repository's config (the runs pass --trust), its servers unconfined as in run_session."""
    (workspace / ".keel").mkdir(exist_ok=True)
    (workspace / ".keel" / "config.toml").write_text('[sandbox]\nmode = "full-access"\n' + text)


def stdio_table(name: str, calls: Path, extra: str = "") -> str:
    return (
        f"[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(SERVER)}, {json.dumps(str(calls))}]\n{extra}\n"
    )


def test_keel_run_uses_a_configured_server_says_one_notice_and_leaves_no_process(
    scripted_server, workspace, tmp_path
):
    calls = tmp_path / "calls.jsonl"
    write_config(
        workspace,
        stdio_table("t", calls) + '[mcp_servers.ghost]\ncommand = "keel-no-such-mcp-server"\n',
    )
    server = scripted_server([call("mcp__t__add", a=20, b=22), "42"])
    result = run_streamed(server.url, "--trust", "add them", cwd=workspace, home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    errors = [e for e in result.events if e["type"] == "error"]
    assert [e["error_class"] for e in errors] == ["McpServerError"]
    tool = next(e for e in result.events if e["type"] == "tool.finished")
    assert tool["output"] == "the sum is 42"
    assert result.events[-1]["status"] == "completed"
    assert not alive(Path(f"{calls}.pid"))


def test_keel_mcp_list_shows_each_server_its_state_and_its_tools(workspace, tmp_path):
    calls = tmp_path / "calls.jsonl"
    write_config(
        workspace,
        stdio_table("docs", calls, 'read_only = true\ndisabled_tools = ["note"]')
        + '[mcp_servers.ghost]\ncommand = "keel-no-such-mcp-server"\n'
        + '[mcp_servers.off]\nurl = "http://127.0.0.1:9/mcp"\nenabled = false\n',
    )
    result = run_keel("mcp", "list", "--trust", cwd=workspace, home=tmp_path / "home")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("docs  (stdio: ") and lines[0].endswith("  started")
    assert lines[1].split() == [
        "mcp__docs__add",
        "Add",
        "two",
        "integers",
        "and",
        "say",
        "the",
        "sum.",
    ]
    assert lines[2] == "  (1 tool, approved as read-only)"
    assert lines[3].startswith("ghost  (stdio: keel-no-such-mcp-server)  failed: cannot start")
    assert lines[4] == "off  (http: http://127.0.0.1:9/mcp)  disabled"
    assert result.returncode == 1  # one server failed
    assert not alive(Path(f"{calls}.pid"))


def test_keel_mcp_list_without_servers_says_how_to_add_one(workspace, tmp_path):
    result = run_keel("mcp", "list", cwd=workspace, home=tmp_path / "home")
    assert result.returncode == 0
    assert "No MCP servers are configured" in result.stdout
    assert "[mcp_servers.docs]" in result.stdout


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('[mcp_servers.x]\ncommand = "a"\ntimeout = 3\n', "unknown key 'mcp_servers.x.timeout'"),
        ('[mcp_servers.x]\nargs = ["a"]\n', "'mcp_servers.x': Value error, give either command"),
        ('[mcp_servers.x]\ncommand = "a"\nurl = "http://h/mcp"\n', "not both or neither"),
        ('[mcp_servers.x]\nurl = "ftp://h"\n', "is not an http:// or https:// address"),
        ('[mcp_servers."a b"]\ncommand = "a"\n', "server name 'a b' must be"),
        ('[mcp_servers.x]\ncommand = "a"\nstartup_timeout_sec = 0\n', "startup_timeout_sec"),
    ],
)
def test_a_broken_server_table_is_a_config_error_naming_the_key(tmp_path, table, message):
    path = tmp_path / "config.toml"
    path.write_text(table)
    with pytest.raises(ConfigError) as caught:
        load_file(path)
    assert message in str(caught.value)


def test_tool_names_are_namespaced_and_fit_what_apis_accept():
    assert tool_name("docs", "search") == "mcp__docs__search"
    assert tool_name("docs", "read.file/v2") == "mcp__docs__read_file_v2"
    assert len(tool_name("docs", "x" * 100)) == 64


def test_results_are_text_with_pictures_named_and_long_ones_cut():
    import mcp_types

    blocks = [
        mcp_types.TextContent(text="hello"),
        mcp_types.ImageContent(data="aGVsbG8h", mime_type="image/png"),
    ]
    assert render_result(blocks, None) == "hello\n[image: image/png, 6 bytes, not shown]"
    assert render_result([], {"n": 1}) == '{\n "n": 1\n}'
    long = render_result([mcp_types.TextContent(text="x" * 40_000)], None)
    assert long.endswith("[… 10,000 more characters cut]")


def test_the_sdk_is_not_imported_without_a_configured_server():
    probe = "import sys; import keel.agent.core.session; print('mcp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_an_interrupted_keel_run_leaves_no_server_process(scripted_server, workspace, tmp_path):
    calls = tmp_path / "calls.jsonl"
    write_config(workspace, stdio_table("t", calls))
    release = threading.Event()

    def slow_model(request: ChatRequest) -> str:
        release.wait(60)  # the model "thinks" until the test is done
        return "done"

    server = scripted_server(slow_model)
    command = [KEEL, "run", "--trust", "--model", "openai/any", "--api-base", server.url, "wait"]
    process = subprocess.Popen(
        command,
        cwd=workspace,
        env=keel_env(tmp_path / "home"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        assert server.requests, "keel should be waiting on the model"
        assert alive(Path(f"{calls}.pid"))  # started with the session
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert not alive(Path(f"{calls}.pid"))
