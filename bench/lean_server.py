"""A lean stand-in for a remote model server, for throughput benchmarks: asyncio, replies pre-encoded.

It speaks the scripted server's wire format (keel.agent.testing.scripted_wire builds the SSE chunks) but
does no per-request parsing beyond the HTTP head: the reply is chosen by counting the tool results
in the raw body. A real model server runs on another machine; here it shares two cores with the
agents, so the less CPU it takes, the more the benchmark measures keel instead of its stand-in.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from keel.agent.testing.scripted_wire import Reply, stream_chunks

TOOL_RESULT_MARKERS = (b'"role":"tool"', b'"role": "tool"')


def sse_response(reply: Reply, number: int) -> bytes:
    """One complete HTTP response: the reply streamed as server-sent events, with usage."""
    chunks = stream_chunks(
        reply, "bench", number, 1000, True, 8, 4
    )  # as ScriptedServer splits them
    events = (
        b"".join(f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks)
        + b"data: [DONE]\n\n"
    )
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        b"Content-Length: %d\r\n\r\n" % len(events)
    )
    return head + events


class LeanServer:
    """Answers request n (n = tool results in the request) with replies[min(n, last)] after `delay` seconds."""

    def __init__(self, replies: list[Reply], delay: float) -> None:
        self.responses = [sse_response(reply, n) for n, reply in enumerate(replies)]
        self.delay = delay
        self.requests = 0

    def pick(self, body: bytes) -> bytes:
        done = sum(body.count(marker) for marker in TOOL_RESULT_MARKERS)
        return self.responses[min(done, len(self.responses) - 1)]

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
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=512)
        port = server.sockets[0].getsockname()[1]
        ready(f"http://127.0.0.1:{port}/v1")
        async with server:
            await server.serve_forever()
