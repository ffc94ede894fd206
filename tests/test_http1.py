"""The direct model path's HTTP/1.1 client against small real servers: reuse, stale connections, breaks."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import pytest

from keel.agent.core.model.http1 import ConnectFailed, ConnectionLost, HTTP1Client

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Server:
    """An asyncio TCP server on 127.0.0.1 that counts the connections it accepted."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[bytes] = []

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()

    async def read_request(self, reader: asyncio.StreamReader) -> bytes:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        body = await reader.readexactly(length)
        self.requests.append(head + body)
        return body


def sized(body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


def chunked(*pieces: bytes) -> bytes:
    framed = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces)
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + framed + b"0\r\n\r\n"


async def post(client: HTTP1Client, body: bytes) -> tuple[int, bytes]:
    async with client.post(
        "/chat/completions", body, {"Content-Type": "application/json"}
    ) as response:
        return response.status, await response.read()


async def test_one_connection_serves_sized_and_chunked_responses():
    server: Server

    async def echo(reader, writer):
        while True:
            body = await server.read_request(reader)
            writer.write(
                sized(body.upper()) if len(server.requests) % 2 else chunked(body, b"!", body)
            )

    server = Server(echo)
    async with server as url:
        client = HTTP1Client(url)
        results = [await post(client, f"call {n}".encode()) for n in range(5)]
        await client.aclose()
    assert results[0] == (200, b"CALL 0")
    assert results[1] == (200, b"call 1!call 1")
    assert results[4] == (200, b"CALL 4")
    assert server.connections == 1
    first = server.requests[0]
    assert first.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert b"\r\nHost: 127.0.0.1:" in first and b"\r\nContent-Length: 6\r\n" in first


async def test_a_connection_the_server_closed_while_idle_is_replaced():
    """Replaced before the request is sent; a request the server hung up on is never resent here."""
    server: Server

    async def one_then_close(reader, writer):
        body = await server.read_request(reader)
        writer.write(
            sized(body)
        )  # no "Connection: close": the client only learns on its next request
        await writer.drain()

    server = Server(one_then_close)
    async with server as url:
        client = HTTP1Client(url)
        results = []
        for n in range(3):
            results.append(await post(client, b"x%d" % n))
            await asyncio.sleep(0.05)  # idle: the server's close reaches the client
        await client.aclose()
    assert results == [(200, b"x0"), (200, b"x1"), (200, b"x2")]
    assert server.connections == 3 and len(server.requests) == 3


async def test_connection_close_is_honoured():
    server: Server

    async def closing(reader, writer):
        while True:
            body = await server.read_request(reader)
            writer.write(sized(body, b"Connection: close\r\n"))

    server = Server(closing)
    async with server as url:
        client = HTTP1Client(url)
        assert [await post(client, b"a"), await post(client, b"b")] == [(200, b"a"), (200, b"b")]
        await client.aclose()
    assert server.connections == 2


async def test_a_body_cut_short_is_a_lost_connection_and_the_next_call_reconnects():
    server: Server

    async def cut_once(reader, writer):
        body = await server.read_request(reader)
        if len(server.requests) == 1:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
            await writer.drain()
            return
        writer.write(sized(body))
        await writer.drain()

    server = Server(cut_once)
    async with server as url:
        client = HTTP1Client(url)
        with pytest.raises(ConnectionLost):
            await post(client, b"first")
        assert await post(client, b"second") == (200, b"second")
        await client.aclose()


async def test_a_body_left_unread_does_not_poison_the_next_call():
    server: Server

    async def echo(reader, writer):
        while True:
            body = await server.read_request(reader)
            writer.write(chunked(body, body, body))

    server = Server(echo)
    async with server as url:
        client = HTTP1Client(url)
        async with client.post("/chat/completions", b"left", {}) as response:
            async for _first_piece in response.body():
                break
        assert await post(client, b"next") == (200, b"nextnextnext")
        await client.aclose()


async def test_a_request_cancelled_before_its_answer_does_not_answer_the_next_one():
    server: Server
    first_arrived = asyncio.Event()
    release = asyncio.Event()

    async def slow_then_echo(reader, writer):
        while True:
            body = await server.read_request(reader)
            if body == b"slow":
                first_arrived.set()
                await release.wait()
            writer.write(sized(body))

    server = Server(slow_then_echo)
    async with server as url:
        client = HTTP1Client(url)
        slow = asyncio.create_task(post(client, b"slow"))
        await first_arrived.wait()
        slow.cancel()  # an interrupt while the model has not answered yet
        with pytest.raises(asyncio.CancelledError):
            await slow
        release.set()  # the server answers the cancelled request after all
        assert await post(client, b"next") == (200, b"next")
        assert server.connections == 2
        await client.aclose()


async def test_nothing_listening_is_a_connect_failure():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = HTTP1Client(f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ConnectFailed):
        await post(client, b"x")


def test_only_http_urls_are_accepted():
    with pytest.raises(ValueError, match="not an http"):
        HTTP1Client("ftp://example.com/v1")


async def test_a_request_the_server_hung_up_on_is_not_resent():
    server: Server

    async def answer_then_hang_up(reader, writer):
        body = await server.read_request(reader)
        writer.write(sized(body))
        await server.read_request(reader)  # the second request arrives, and no answer comes

    server = Server(answer_then_hang_up)
    async with server as url:
        client = HTTP1Client(url)
        assert await post(client, b"one") == (200, b"one")
        with pytest.raises(ConnectionLost):
            await post(client, b"two")
        await client.aclose()
    assert len(server.requests) == 2 and server.connections == 1
