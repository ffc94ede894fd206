"""The time guards of a reply stream: a try ends when nothing arrives for a while (stall_timeout), or when no
event arrives for request_timeout (before the reply begins, or between its events); a reply that keeps coming
is never cut off for being long (the 1.5B on two cores, given a medium project's files, took over ten
minutes for one reply)."""

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
    """The stream's pieces; StreamStalled when the next one takes longer than `seconds` to arrive. One
    timer guards the whole stream, set again only when it fires early: a piece costs a clock read, where a
    timeout per piece would cost a timer made and cancelled."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    pieces = aiter(stream)
    waiting_since: float | None = None  # None while the consumer holds a piece
    fired = False
    timer: asyncio.TimerHandle

    def check() -> None:
        nonlocal timer, fired
        left = seconds if waiting_since is None else waiting_since + seconds - loop.time()
        if left > 0:
            timer = loop.call_later(left, check)
        else:
            fired = True
            task.cancel()

    timer = loop.call_later(seconds, check)
    try:
        while True:
            waiting_since = loop.time()
            try:
                piece = await anext(pieces)
            except StopAsyncIteration:
                return
            except BaseException as exc:
                # our cancel is taken back whatever the stream made of it; alone, it is a stall
                if fired and task.uncancel() == 0 and isinstance(exc, asyncio.CancelledError):
                    raise StreamStalled(
                        f"the reply from {where} stalled: nothing arrived for {seconds:g} s "
                        "(stall_timeout)",
                        "StreamStalled",
                    ) from None
                raise
            waiting_since = None
            yield piece
    finally:
        timer.cancel()


async def events_keep_alive(
    stream: AsyncIterable[bytes], deadline: asyncio.Timeout, seconds: float
) -> AsyncIterator[bytes]:
    """The stream's pieces; each that brings an event (`data:`) moves `deadline` to `seconds` from now, so
    the deadline bounds the wait for the reply to begin and any wait between its events, not its length
    (keep-alive comments move nothing). The deadline moves once half of it has passed: a piece costs a clock
    read, not a timer."""
    loop = asyncio.get_running_loop()
    async for piece in stream:
        if b"data:" in piece:
            now = loop.time()
            when = deadline.when()
            if when is not None and when - now < seconds / 2:
                deadline.reschedule(now + seconds)
        yield piece
