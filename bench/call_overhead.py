"""bench/call_overhead: harness CPU per model call (a whole keel step), direct and through litellm, against a raw httpx call."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import ServerProcess, row

CALLS = 40


def script(calls: int) -> list[dict]:
    steps = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt", "limit": 5 + i}}]}
        for i in range(calls - 1)
    ]
    return steps + [{"text": "done"}]


async def raw_calls(url: str, calls: int) -> float:
    """CPU seconds for `calls` streamed chat requests made directly with httpx (the floor)."""
    body = {"model": "any", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    async with httpx.AsyncClient(timeout=30) as client:
        start = time.process_time()
        for _ in range(calls):
            async with client.stream("POST", f"{url}/chat/completions", json=body) as response:
                async for _line in response.aiter_lines():
                    pass
        return time.process_time() - start


async def keel_calls(url: str, calls: int, transport: str) -> float:
    """CPU seconds for a keel session making `calls` model calls, each followed by its tool call.

    `transport` "direct" is keel's own client for OpenAI-compatible servers; "litellm" sends the
    same calls through litellm (KEEL_TRANSPORT=litellm)."""
    os.environ["KEEL_TRANSPORT"] = "litellm" if transport == "litellm" else "direct"
    from keel.agent.core.model.client import litellm_module
    from keel.agent.core.protocol import TaskFinished, UserPrompt
    from keel.agent.core.session import Session
    from keel.agent.core.settings import SessionSettings

    litellm_module()  # import cost is startup, not per call
    workspace = Path(tempfile.mkdtemp())
    (workspace / "notes.txt").write_text("one\ntwo\nthree\n")
    settings = SessionSettings(cwd=workspace, model="openai/any", api_base=url, budget=10**9)
    start = time.process_time()
    async with Session(settings) as session:
        session.submit(UserPrompt(text="read the notes"))
        async for event in session.events():
            if isinstance(event, TaskFinished):
                assert event.steps == calls - 1, event
                break
    return time.process_time() - start


def main() -> None:
    os.environ["KEEL_HOME"] = tempfile.mkdtemp()
    keel = {}
    for transport in ("direct", "litellm"):
        with ServerProcess(script(3)) as server:
            asyncio.run(keel_calls(server.url, 3, transport))  # warm up imports and connections
        with ServerProcess(script(CALLS)) as server:
            keel[transport] = asyncio.run(keel_calls(server.url, CALLS, transport)) / CALLS
    with ServerProcess([{"text": "hello there"}] * CALLS) as server:
        raw = asyncio.run(raw_calls(server.url, CALLS)) / CALLS
    print(f"CPU per model call ({CALLS} calls; server in another process)")
    row("raw httpx streamed request", f"{raw * 1000:.2f} ms", "1.00x")
    for transport, label in (("direct", "direct call"), ("litellm", "litellm call")):
        row(
            f"keel step ({label} + tool + events + log)",
            f"{keel[transport] * 1000:.2f} ms",
            f"{keel[transport] / raw:.1f}x raw",
        )
    row("litellm step / direct step", f"{keel['litellm'] / keel['direct']:.1f}x")


if __name__ == "__main__":
    sys.exit(main())
