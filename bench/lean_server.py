"""A lean stand-in for a remote model server, for throughput benchmarks: asyncio, replies pre-encoded.

It speaks the scripted server's wire format (keel.agent.harness.testing.scripted_wire builds the SSE chunks) but
does no per-request parsing beyond the HTTP head: the reply is chosen by counting the tool results
in the raw body. A real model server runs on another machine; here it shares two cores with the
agents, so the less CPU it takes, the more the benchmark measures keel instead of its stand-in.

With `tokens`, replies carry token ids and logprobs in vLLM's shape (`return_token_ids`): the first
chunk has the request's `prompt_token_ids` (one id per 4 bytes of the request body, sliced from a
pre-encoded list, so it costs a copy), each delta chunk its `token_ids` and `logprobs.content`.
"""

from __future__ import annotations

import asyncio
import json
import math
from array import array
from collections.abc import Callable
from typing import Any

from keel.agent.harness.testing.scripted_wire import Reply, stream_chunks

TOOL_RESULT_MARKERS = (b'"role":"tool"', b'"role": "tool"')
PROMPT_IDS = b"@PROMPT_IDS@"
PROMPT_COUNT = b"@PROMPT_COUNT@"
MAX_PROMPT_IDS = 262_144


def _events(chunks: list[dict[str, Any]]) -> bytes:
    return (
        b"".join(f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks)
        + b"data: [DONE]\n\n"
    )


def _head(length: int) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        b"Content-Length: %d\r\n\r\n" % length
    )


def sse_response(reply: Reply, number: int) -> bytes:
    """One complete HTTP response: the reply streamed as server-sent events, with usage."""
    chunks = stream_chunks(
        reply, "bench", number, 1000, True, 8, 4
    )  # as ScriptedServer splits them
    events = _events(chunks)
    return _head(len(events)) + events


def token_template(reply: Reply, number: int) -> bytes:
    """The events of a reply with token ids and logprobs, the prompt's ids and count left as holes."""
    chunks = stream_chunks(reply, "bench", number, 0, True, 8, 4)
    completion = 0
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            text = delta.get("content") or "".join(
                (call.get("function") or {}).get("name", "")
                + (call.get("function") or {}).get("arguments", "")
                for call in delta.get("tool_calls") or ()
            )
            count = math.ceil(len(text) / 4)
            ids = [100 + (completion + i) % 50_000 for i in range(count)]
            completion += count
            choice["token_ids"] = ids
            choice["logprobs"] = {
                "content": [{"token": f"t{i}", "logprob": -0.25, "bytes": None} for i in ids]
            }
    chunks[0]["prompt_token_ids"] = "PROMPT_IDS"
    usage = chunks[-1]["usage"]
    usage.update(prompt_tokens="PROMPT_COUNT", completion_tokens=completion)
    usage.pop("total_tokens", None)  # the client adds prompt and completion
    return (
        _events(chunks)
        .replace(b'"PROMPT_IDS"', PROMPT_IDS)
        .replace(b'"PROMPT_COUNT"', PROMPT_COUNT)
    )


class PromptIds:
    """The first n of a fixed id sequence as JSON, by slicing one pre-encoded list."""

    def __init__(self, limit: int = MAX_PROMPT_IDS) -> None:
        ids = [str(3 + (i * 7919) % 150_000) for i in range(limit)]
        self.text = ("[" + ",".join(ids) + "]").encode()
        self.ends = array("q", [1])
        for piece in ids:
            self.ends.append(self.ends[-1] + len(piece) + (len(self.ends) > 1))

    def json(self, count: int) -> bytes:
        count = min(count, len(self.ends) - 1)
        return self.text[: self.ends[count]] + b"]"


class LeanServer:
    """Answers request n (n = tool results in the request) with replies[min(n, last)] after `delay` seconds."""

    def __init__(
        self, replies: list[Reply], delay: float, tokens: bool = False, backlog: int = 4096
    ) -> None:
        self.responses = [sse_response(reply, n) for n, reply in enumerate(replies)]
        self.templates = [token_template(reply, n) for n, reply in enumerate(replies)]
        self.prompt_ids = PromptIds() if tokens else None
        self.delay = delay
        self.backlog = backlog
        self.requests = 0

    def pick(self, body: bytes) -> bytes:
        done = sum(body.count(marker) for marker in TOOL_RESULT_MARKERS)
        number = min(done, len(self.responses) - 1)
        if self.prompt_ids is None:
            return self.responses[number]
        count = len(body) // 4
        events = (
            self.templates[number]
            .replace(PROMPT_IDS, self.prompt_ids.json(count))
            .replace(PROMPT_COUNT, b"%d" % count)
        )
        return _head(len(events)) + events

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                body = await reader.readexactly(length)
                self.requests += 1
                await asyncio.sleep(self.delay)
                writer.write(self.pick(body))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def run(self, ready: Callable[[str], None]) -> None:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=self.backlog)
        port = server.sockets[0].getsockname()[1]
        ready(f"http://127.0.0.1:{port}/v1")
        async with server:
            await server.serve_forever()
