"""The stall guard of a reply stream: a try ends when nothing arrives for a while, not only when the whole
reply is overdue (a stream that never ends would otherwise hold a step for request_timeout × tries)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator
from typing import TypeVar

from keel.agent.core.errors import RetryableProviderError

Piece = TypeVar("Piece")


class StreamStalled(RetryableProviderError):
    """No byte of a reply that had begun arrived for `stall_timeout` seconds: retried like a timeout."""


async def unstalled(
    stream: AsyncIterable[Piece], seconds: float, where: str
) -> AsyncIterator[Piece]:
    """The stream's pieces; StreamStalled when the next one takes longer than `seconds` to arrive."""
    pieces = aiter(stream)
    while True:
        try:
            async with asyncio.timeout(seconds):
                piece = await anext(pieces)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise StreamStalled(
                f"the reply from {where} stalled: nothing arrived for {seconds:g} s (stall_timeout)",
                "StreamStalled",
            ) from None
        yield piece
