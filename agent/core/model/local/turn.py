"""One reply of the embedded model: prose streamed as it comes, tool calls decoded under a grammar of the tools.

A 0.5B model asked to call tools writes bare JSON, often naming a tool that does not exist or forgetting a brace.
So the reply is generated freely until it opens a call (`{` at a line start, `<tool_call>`, or a fence around a
`{`); from there the
call is decoded again under a llama.cpp grammar built from the offered tools' schemas (as llama.cpp's own server
does for tool calls), so it is one well-formed JSON object naming a real tool. What a repeated or missing call
means is the agent loop's to decide (keel.agent.core.loop), where it is logged; nothing is injected here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import replace
from typing import Any

from keel.agent.core.model.local.compact_tools import call_schema
from keel.agent.core.model.local.engine import Generation, LocalEngine, PromptProgress, Sampling
from keel.agent.core.model.local.reply_split import ReplySplitter, unwrap_nested_call
from keel.agent.core.model.local.token_trace import TokenTrace, turn_tokens_of
from keel.agent.core.protocol import TurnTokens
from keel.agent.core.text_protocol import MalformedToolCall, ParsedCall, parse_tool_calls


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
        record_tokens: bool = False,
    ) -> None:
        self.engine = engine
        self.messages = messages
        self.tools = tools
        self.sampling = sampling
        self.on_prompt = on_prompt
        self.counts = Generation()
        self.calls: list[ParsedCall] = []
        self._free = TokenTrace() if record_tokens else None
        self._constrained: TokenTrace | None = None

    @property
    def tokens(self) -> TurnTokens | None:
        """The turn's token ids and logprobs, once `prose()` has ended (with record_tokens only)."""
        return turn_tokens_of(self._free, self._constrained) if self._free else None

    async def prose(self) -> AsyncIterator[str]:
        """The reply's text as it is generated; the tool calls it makes are in `calls` once this ends.

        Without tools (keel's text protocol) a call stays in the text, where the loop reads it."""
        splitter = ReplySplitter()
        stream = self.engine.stream(
            self.messages,
            self.tools,
            self.counts,
            self.sampling,
            on_prompt=self.on_prompt,
            trace=self._free,
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
        if held:
            yield held
        self.calls = calls[:1] if self.tools else []

    async def _constrained_call(self, start: str) -> tuple[ParsedCall | None, str]:
        """The call decoded under the tools' grammar, after the reply's `start`; text if it failed to close."""
        sampling = replace(self.sampling, call_schema=call_schema(self.tools or []))
        self._constrained = TokenTrace() if self._free else None
        pieces = [
            piece
            async for piece in self.engine.stream(
                self.messages, self.tools, self.counts, sampling, start, trace=self._constrained
            )
        ]
        text = "".join(pieces)
        call = _read_call(text)
        return (call, "") if call else (None, text)
