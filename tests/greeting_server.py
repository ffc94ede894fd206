"""A TCP server on loopback that greets each connection and counts it: what sandbox tests try to reach."""

from __future__ import annotations

import asyncio


async def serve_greetings(connections: list[int]) -> asyncio.Server:
    """Listening on 127.0.0.1 (a free port); each connection appends to `connections` and gets one line."""

    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        writer.write(b"hello from the host\n")
        await writer.drain()
        writer.close()

    return await asyncio.start_server(greet, "127.0.0.1", 0)
