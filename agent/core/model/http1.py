"""A minimal HTTP/1.1 client for the direct model path: one keep-alive connection, bodies streamed.

A model client sends one request at a time, so it needs one connection, not a pool. General
clients (aiohttp, httpx) spend a few hundred microseconds of CPU per request on machinery this
use never needs; with many agents in one process that is what limits them. This does only what
the chat API needs: POST a body, read the status and headers, stream a chunked or sized body.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_HEAD_BYTES = 64 * 1024
READ_SIZE = 64 * 1024


class ConnectFailed(OSError):
    """The server could not be reached (refused, unknown host, no route, connect timeout)."""


class ConnectionLost(ConnectionError):
    """The server closed or broke the connection before the response was complete."""


@dataclass
class Response:
    """A response whose body is read piece by piece with `body()`."""

    status: int
    headers: dict[str, str]  # names lower-cased
    _client: HTTP1Client

    def body(self) -> AsyncIterator[bytes]:
        return self._client._body(self.headers)

    async def read(self) -> bytes:
        return b"".join([piece async for piece in self.body()])


class HTTP1Client:
    """Talks to one origin (scheme, host, port) over a single reused connection."""

    def __init__(self, base_url: str, connect_timeout: float = 30.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.tls = ssl.create_default_context() if parts.scheme == "https" else None
        self.base_path = parts.path.rstrip("/")
        default_port = self.port == (443 if self.tls else 80)
        self.host_header = self.host if default_port else f"{self.host}:{self.port}"
        if ":" in self.host and not default_port:
            self.host_header = f"[{self.host}]:{self.port}"  # an IPv6 literal
        self.connect_timeout = connect_timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._reusable = False
        self._body_complete = False

    async def _connect(self) -> None:
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, ssl=self.tls, limit=MAX_HEAD_BYTES),
                self.connect_timeout,
            )
        except ssl.SSLError:
            raise
        except (TimeoutError, OSError) as exc:
            raise ConnectFailed(f"{type(exc).__name__}: {exc}".rstrip(": ")) from exc

    def _drop(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
        self._reusable = False

    async def aclose(self) -> None:
        writer = self._writer
        self._drop()
        if writer is not None:
            with suppress(OSError):  # ssl.SSLError is an OSError too
                await writer.wait_closed()

    @asynccontextmanager
    async def post(
        self, path: str, body: bytes, headers: dict[str, str]
    ) -> AsyncIterator[Response]:
        """POST `body`; the response's body must be read inside the block for the connection to be reused."""
        head = [
            f"POST {self.base_path}{path} HTTP/1.1",
            f"Host: {self.host_header}",
            f"Content-Length: {len(body)}",
            "Accept-Encoding: identity",
            "Connection: keep-alive",
        ]
        head += [f"{name}: {value}" for name, value in headers.items()]
        request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        response = await self._exchange(request)
        try:
            yield response
        except BaseException:
            self._drop()  # the body was not read to its end: the connection's state is unknown
            raise
        if not (self._reusable and self._body_complete):
            self._drop()

    async def _exchange(self, request: bytes) -> Response:
        if self._reader is not None and self._reader.at_eof():
            self._drop()  # the server closed the idle connection: a new one, before sending anything
        if self._writer is None:
            await self._connect()
        assert self._reader is not None and self._writer is not None
        try:
            self._writer.write(request)
            raw = await self._reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            # not resent here: the server may have received it; the caller's retry policy decides
            self._drop()
            raise ConnectionLost("the server closed the connection without responding") from exc
        except asyncio.LimitOverrunError as exc:
            self._drop()
            raise ConnectionLost("the response headers are larger than 64 KiB") from exc
        except asyncio.CancelledError:
            self._drop()  # its response may still come, and would answer the next request
            raise
        return self._parse_head(raw)

    def _parse_head(self, raw: bytes) -> Response:
        lines = raw.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        try:
            status = int(rest[:3])
        except ValueError:
            self._drop()
            raise ConnectionLost(f"not an HTTP response: {lines[0][:100]!r}") from None
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        self._reusable = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        self._body_complete = False
        return Response(status, headers, self)

    async def _body(self, headers: dict[str, str]) -> AsyncIterator[bytes]:
        reader = self._reader
        assert reader is not None
        try:
            if "chunked" in headers.get("transfer-encoding", "").lower():
                while True:
                    size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                    if size == 0:
                        while (await reader.readuntil(b"\r\n")) != b"\r\n":
                            pass  # trailers
                        break
                    yield (await reader.readexactly(size + 2))[:-2]
            elif "content-length" in headers:
                remaining = int(headers["content-length"])
                while remaining > 0:
                    piece = await reader.read(min(READ_SIZE, remaining))
                    if not piece:
                        raise asyncio.IncompleteReadError(b"", remaining)
                    remaining -= len(piece)
                    yield piece
            else:
                self._reusable = False  # the body ends when the server closes the connection
                while piece := await reader.read(READ_SIZE):
                    yield piece
            self._body_complete = True
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ConnectionError,
            ValueError,
        ) as exc:
            self._drop()
            raise ConnectionLost("the connection broke in the middle of the response") from exc
