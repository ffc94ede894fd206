"""One reply of the embedded model: prose streamed as it comes, tool calls decoded under a grammar of the tools.

A 0.5B model asked to call tools writes bare JSON, often naming a tool that does not exist or forgetting a brace.
So the reply is generated freely until it opens a call (`{` at a line start, `<tool_call>`, or a fence around a
`{`); from there the
call is decoded again under a llama.cpp grammar built from the offered tools' schemas (as llama.cpp's own server
does for tool calls), so it is one well-formed JSON object naming a real tool. And when the model asks for
exactly the call whose result it already has — it does, instead of answering — it is asked for its answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import replace
from typing import Any

from keel.agent.model.local.compact_tools import call_schema
from keel.agent.model.local.engine import Generation, LocalEngine, PromptProgress, Sampling
from keel.agent.model.local.reply_split import ReplySplitter, unwrap_nested_call
from keel.agent.text_protocol import MalformedToolCall, ParsedCall, parse_tool_calls
from keel.prompts import render


def _arguments(raw: Any) -> Any:
    try:
        return json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return raw


def _previous_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last assistant message's calls: its tool calls, or in the text protocol the calls in its text."""
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        if message.get("tool_calls"):
            return [call.get("function") or {} for call in message["tool_calls"]]
        written = _read_call(str(message.get("content") or ""))
        return [{"name": written.name, "arguments": written.arguments}] if written else []
    return []


def repeats_last_call(messages: list[dict[str, Any]], call: ParsedCall) -> bool:
    """True when call is the same as the model's previous call, whose result it already has."""
    return any(
        previous.get("name") == call.name
        and _arguments(previous.get("arguments")) == _arguments(call.arguments)
        for previous in _previous_calls(messages)
    )


def _read_call(text: str) -> ParsedCall | None:
    try:
        calls = parse_tool_calls(text)
    except MalformedToolCall:
        return None
    return calls[0] if calls else None


class LocalTurn:
    """Generates one reply; iterate `prose()`, then read `calls`."""

    def __init__(
        self,
        engine: LocalEngine,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        sampling: Sampling,
        on_prompt: PromptProgress | None = None,
    ) -> None:
        self.engine = engine
        self.messages = messages
        self.tools = tools
        self.sampling = sampling
        self.on_prompt = on_prompt
        self.counts = Generation()
        self.calls: list[ParsedCall] = []

    async def prose(self) -> AsyncIterator[str]:
        """The reply's text as it is generated; the tool calls it makes are in `calls` once this ends.

        Without tools (keel's text protocol) a call stays in the text, where the loop reads it."""
        splitter = ReplySplitter()
        stream = self.engine.stream(
            self.messages, self.tools, self.counts, self.sampling, on_prompt=self.on_prompt
        )
        async with aclosing(stream) as pieces:
            async for piece in pieces:
                if shown := splitter.feed(piece):
                    yield shown
                if (self.tools and splitter.opens_call()) or splitter.holds_complete_call():
                    break
        held = splitter.text[splitter.released :]
        if self.tools and splitter.opens_call() and splitter.held_from is not None:
            start = splitter.text[: splitter.held_from] + (
                "<tool_call>\n" if splitter.opener == "<tool_call>" else ""
            )
            call, held = await self._constrained_call(start)
            calls = [call] if call else []
        else:
            rest = splitter.finish()
            names = {tool["function"]["name"] for tool in self.tools or []}
            calls = [unwrap_nested_call(call, names) for call in rest.calls]
            held = rest.content if self.tools else held
        if calls and repeats_last_call(self.messages, calls[0]):
            async for piece in self._answer(calls[0].name):
                yield piece
            return
        if held:
            yield held
        self.calls = calls[:1] if self.tools else []

    async def _constrained_call(self, start: str) -> tuple[ParsedCall | None, str]:
        """The call decoded under the tools' grammar, after the reply's `start`; text if it failed to close."""
        sampling = replace(self.sampling, call_schema=call_schema(self.tools or []))
        pieces = [
            piece
            async for piece in self.engine.stream(
                self.messages, self.tools, self.counts, sampling, start
            )
        ]
        text = "".join(pieces)
        call = _read_call(text)
        return (call, "") if call else (None, text)

    async def _answer(self, tool_name: str) -> AsyncIterator[str]:
        """The model repeated its last call: ask it, in so many words, to answer from the results it has."""
        nudge = {"role": "user", "content": render("local_answer", name=tool_name)}
        sampling = replace(self.sampling, prose_only=True)
        async with aclosing(
            self.engine.stream([*self.messages, nudge], self.tools, self.counts, sampling)
        ) as pieces:
            async for piece in pieces:
                yield piece
