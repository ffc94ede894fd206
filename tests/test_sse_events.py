"""The direct client's reading of a server-sent event stream (keel.agent.core.model.sse_reading): events that
arrive together are parsed together, in order, however the bytes are cut; a malformed event or an error event
is a provider fault that says so."""

from __future__ import annotations

import json

import pytest

from keel.agent.core.errors import RetryableProviderError
from keel.agent.core.model.reply import ReplyAssembler
from keel.agent.core.model.sse_reading import read_stream


def event(chunk: dict | str) -> bytes:
    return f"data: {chunk if isinstance(chunk, str) else json.dumps(chunk)}\n\n".encode()


def text(piece: str) -> dict:
    return {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}


def call(arguments: str, name: str | None = None) -> dict:
    function = {"arguments": arguments, **({"name": name} if name else {})}
    delta = {"tool_calls": [{"index": 0, "id": "c1" if name else None, "function": function}]}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


END = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
STREAM = b"".join(
    [
        event(text("Reading ")),
        event(text("it.")),
        event(call('{"pa', "read_file")),
        event(call('th": "a.py"}')),
        event(END),
        event({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}}),
        b"data: [DONE]\n\n",
    ]
)


async def read(pieces: list[bytes]) -> tuple[ReplyAssembler, list[str]]:
    async def body():
        for piece in pieces:
            yield piece

    assembler, deltas = ReplyAssembler(), []
    await read_stream(assembler, body(), deltas.append)
    return assembler, deltas


@pytest.mark.parametrize("cut", [None, 1, 7, 40])
async def test_events_read_alike_however_the_bytes_arrive(cut):
    pieces = [STREAM] if cut is None else [STREAM[i : i + cut] for i in range(0, len(STREAM), cut)]
    assembler, deltas = await read(pieces)
    assert deltas == ["Reading ", "it."]
    assert assembler.finish_reason == "tool_calls"
    [buffer] = assembler.calls.values()
    assert (buffer.id, buffer.name, "".join(buffer.arguments)) == (
        "c1",
        "read_file",
        '{"path": "a.py"}',
    )
    assert assembler.usage is not None and assembler.usage.prompt_tokens == 9


@pytest.mark.parametrize("bad", ["{not json", '{"a": 1}, {"b": 2}', "[1, 2"])
async def test_a_malformed_event_among_good_ones_is_named(bad):
    stream = event(text("fine")) + event(bad) + event(END) + b"data: [DONE]\n\n"
    with pytest.raises(RetryableProviderError, match="malformed event") as raised:
        await read([stream])
    assert bad[:8] in str(raised.value)


async def test_an_error_event_mid_stream_stops_the_reply():
    stream = event(text("half")) + event({"error": {"message": "overloaded"}}) + event(text("more"))
    with pytest.raises(RetryableProviderError, match="failed mid-reply: overloaded"):
        await read([stream])


async def test_a_stream_without_its_end_is_a_dropped_connection():
    with pytest.raises(RetryableProviderError, match="ended before it was complete"):
        await read([event(text("half"))])
