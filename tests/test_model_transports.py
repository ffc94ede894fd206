"""ModelClient over both transports (direct HTTP and litellm): the same replies, errors and retries."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from keel.agent.core.errors import ContextWindowExceeded, ProviderError, ToolsUnsupported
from keel.agent.core.model.client import ModelClient
from keel.agent.core.protocol import ModelRetry
from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

ROOT = Path(__file__).resolve().parent.parent
HELLO = [{"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


@pytest.fixture(params=["direct", "litellm"])
def transport(request, monkeypatch) -> str:
    if request.param == "litellm":
        monkeypatch.setenv("KEEL_TRANSPORT", "litellm")
    else:
        monkeypatch.delenv("KEEL_TRANSPORT", raising=False)
    return request.param


def client(url: str, seen: list[ModelRetry] | None = None, **options) -> ModelClient:
    sink = seen.append if seen is not None else (lambda event: None)
    return ModelClient(
        model="openai/any", api_base=url, retry_base_delay=0.01, on_retry=sink, **options
    )


async def complete(model: ModelClient, deltas: list[str] | None = None):
    try:
        return await model.complete(HELLO, TOOLS, (deltas if deltas is not None else []).append)
    finally:
        await model.aclose()


async def test_streamed_text_and_two_tool_calls(transport, scripted_server):
    calls = [
        ScriptedToolCall(name="read_file", arguments={"path": "a.py"}, id="call_a"),
        ScriptedToolCall(name="search", arguments={"pattern": "x y"}, id="call_b"),
    ]
    server = scripted_server([Reply(text="Looking at both files.", tool_calls=calls)])
    deltas: list[str] = []
    reply = await complete(client(server.url), deltas)
    assert reply.text == "Looking at both files." == "".join(deltas)
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("call_a", "read_file", {"path": "a.py"}),
        ("call_b", "search", {"pattern": "x y"}),
    ]
    assert reply.finish_reason == "tool_calls"
    assert reply.usage.prompt_tokens == server.requests[0].prompt_tokens > 0
    body = server.requests[0].body
    assert body["model"] == "any" and body["stream"] is True and body["messages"] == HELLO
    assert body["tools"] == TOOLS


async def test_rate_limit_and_server_error_are_retried_with_their_classes(
    transport, scripted_server
):
    server = scripted_server([Reply(error=429), Reply(error=500), Reply(error=503), "fine"])
    retries: list[ModelRetry] = []
    reply = await complete(client(server.url, retries))
    assert reply.text == "fine"
    assert [r.error_class for r in retries] == [
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
    ]
    assert len(server.requests) == 4


async def test_stream_cut_mid_reply_is_retried(transport, scripted_server):
    server = scripted_server([Reply(text="abcdefgh" * 4, drop_after_chunks=3), "whole answer"])
    retries: list[ModelRetry] = []
    reply = await complete(client(server.url, retries))
    assert reply.text == "whole answer"
    assert len(retries) == 1


async def test_context_too_long_is_typed_and_not_retried(transport, scripted_server):
    server = scripted_server([Reply(error=400), "unused"])
    with pytest.raises(ContextWindowExceeded, match="maximum context length"):
        await complete(client(server.url))
    assert len(server.requests) == 1


async def test_tools_rejected_is_typed(transport, scripted_server):
    server = scripted_server([Reply(error=400, error_message="this model does not support tools")])
    with pytest.raises(ToolsUnsupported):
        await complete(client(server.url))


async def test_bad_key_is_not_retried(transport, scripted_server):
    server = scripted_server(
        [Reply(error=401, error_message="Incorrect API key provided"), "unused"]
    )
    with pytest.raises(ProviderError, match="Incorrect API key") as raised:
        await complete(client(server.url))
    assert raised.value.error_class == "AuthenticationError"
    assert len(server.requests) == 1


async def test_a_missing_key_is_not_retried(monkeypatch):
    """What the TUI meets (`keel run` and `keel batch` refuse earlier): one attempt, a clear error."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    retries: list[ModelRetry] = []
    model = ModelClient(model="openai/gpt-4o-mini", retry_base_delay=0.01, on_retry=retries.append)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY") as raised:
        await complete(model)
    assert raised.value.error_class == "AuthenticationError" and retries == []


async def test_refused_connection_names_the_server(transport):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here once the probe closes
    url = f"http://127.0.0.1:{port}/v1"
    retries: list[ModelRetry] = []
    with pytest.raises(ProviderError, match="gave up after 2 retries") as raised:
        await complete(client(url, retries, retries=2))
    assert raised.value.error_class == "APIConnectionError"
    assert [r.error_class for r in retries] == ["APIConnectionError"] * 2


async def test_direct_client_waits_as_long_as_retry_after_asks(scripted_server):
    server = scripted_server([Reply(error=429, retry_after=0.3), "done"])
    retries: list[ModelRetry] = []
    reply = await complete(client(server.url, retries))
    assert reply.text == "done"
    assert retries[0].delay >= 0.3


def test_direct_client_never_imports_litellm(scripted_server):
    server = scripted_server(["pong"])
    probe = (
        "import asyncio, sys\n"
        "from keel.agent.core.model.client import ModelClient, context_window_of\n"
        f"model = ModelClient(model='openai/any', api_base={server.url!r})\n"
        "reply = asyncio.run(model.complete([{'role': 'user', 'content': 'ping'}], None, print))\n"
        f"window = context_window_of('openai/any', None, 1234, {server.url!r})\n"
        "print(reply.text, window, 'litellm' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "pong 1234 False"
