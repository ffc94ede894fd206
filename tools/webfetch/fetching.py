"""One page over HTTP(S) with every bound a tool call needs: http and https only, at most a few redirects
(each checked again), a timeout, and a cap on the bytes read, so no page can hang or flood the agent."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:  # imported when a page is fetched: a session that never fetches never pays for it
    import httpx

MAX_REDIRECTS = 5
MAX_BYTES = 2_000_000
TIMEOUT_SECONDS = 20.0
USER_AGENT = "keel-web-fetch/1 (a coding agent reading a page for its user)"
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.IGNORECASE)


class FetchError(Exception):
    """The page could not be fetched; the message says why and what would work."""


@dataclass
class Page:
    """What a fetch got: the final URL, the redirects on the way, the body (at most MAX_BYTES) and its type."""

    url: str
    status: int
    content_type: str
    body: bytes
    cut: bool  # the body was longer than MAX_BYTES
    redirects: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The body decoded with the charset the server named (UTF-8 if none, or an unknown one)."""
        found = _CHARSET.search(self.content_type)
        try:
            return self.body.decode(found.group(1) if found else "utf-8", errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


def check_url(url: str) -> str:
    """The URL if it is an absolute http(s) one with a host; otherwise a FetchError saying what to send."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        shown = f"{parts.scheme}:" if parts.scheme else "no scheme"
        raise FetchError(
            f"{url!r} has {shown}; web_fetch reads only http:// and https:// URLs "
            "(read local files with read_file)"
        )
    if not parts.hostname:
        raise FetchError(f"{url!r} names no host; send a full URL such as https://example.com/page")
    return url.strip()


async def fetch(url: str, *, max_bytes: int = MAX_BYTES, timeout: float = TIMEOUT_SECONDS) -> Page:
    """GET `url`, following at most MAX_REDIRECTS redirects to http(s) URLs, reading at most `max_bytes`,
    all within `timeout` seconds (a server that sends a byte at a time cannot stretch it)."""
    import httpx

    current = check_url(url)
    redirects: list[str] = []
    try:
        async with (
            asyncio.timeout(timeout),
            httpx.AsyncClient(
                timeout=httpx.Timeout(timeout),
                follow_redirects=False,
                headers={"User-Agent": USER_AGENT},
            ) as client,
        ):
            while True:
                async with client.stream("GET", current) as response:
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        if len(redirects) >= MAX_REDIRECTS:
                            raise FetchError(
                                f"{url} redirected more than {MAX_REDIRECTS} times (last to "
                                f"{location}); fetch the final address directly if you know it"
                            )
                        current = check_url(urljoin(current, location))
                        redirects.append(current)
                        continue
                    body, cut = await _read_capped(response, max_bytes)
                    return Page(
                        url=current,
                        status=response.status_code,
                        content_type=response.headers.get("content-type", ""),
                        body=body,
                        cut=cut,
                        redirects=redirects,
                    )
    except (httpx.TimeoutException, TimeoutError):
        raise FetchError(
            f"{current} did not answer within {timeout:g} s; try again later"
        ) from None
    except httpx.HTTPError as exc:
        raise FetchError(f"could not fetch {current}: {exc or type(exc).__name__}") from None


async def _read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """The body up to `max_bytes`, and whether there was more (the rest is never read)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False
