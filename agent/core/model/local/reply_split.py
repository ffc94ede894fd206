"""Splits a small model's streamed reply into prose (shown as it comes) and tool calls written as text."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from keel.agent.core.text_protocol import (
    MalformedToolCall,
    ParsedCall,
    object_end,
    parse_tool_calls,
)

_OPENERS = ("<tool_call>", "```")
_FENCE_HEAD = re.compile(r"```[\w-]*[ \t]*\n?\s*(\S)")


@dataclass
class SplitReply:
    """What is left to show once the reply is complete, and the tool calls it held."""

    content: str
    calls: list[ParsedCall]


def _call_starts_at(text: str, index: int) -> bool:
    """A JSON object opening a line (or the reply) may be a call; one inside a sentence is prose."""
    if text[index] != "{":
        return any(text.startswith(opener, index) for opener in _OPENERS)
    return index == 0 or text[index - 1] == "\n" or not text[:index].strip()


def _partial_opener_at(text: str, index: int) -> bool:
    """The text ends in what may become an opener once the next pieces arrive."""
    rest = text[index:]
    return any(len(rest) < len(opener) and opener.startswith(rest) for opener in _OPENERS)


def _object_closes(text: str, start: int) -> bool:
    """True when the JSON object opening at or after start is closed."""
    opening = text.find("{", start)
    return opening >= 0 and object_end(text, opening) is not None


@dataclass
class ReplySplitter:
    """Feed it the pieces of a reply: prose is released at once; from what looks like a tool call on, it holds back."""

    text: str = ""
    released: int = 0
    held_from: int | None = None
    _scanned: int = field(default=0, repr=False)

    def feed(self, piece: str) -> str:
        """Add a piece; returns the text that can be shown now (maybe empty)."""
        self.text += piece
        shown = ""
        while True:
            if self.held_from is not None:
                fence_body = self._fenced_prose_starts()
                if fence_body is None:
                    return shown
                self.held_from, self._scanned = (
                    None,
                    fence_body,
                )  # a code block, not a call: show it
            shown += self._scan()
            if self.held_from is None:
                return shown

    def _scan(self) -> str:
        """Release the text up to the next possible call opener (or all of it), marking where holding starts."""
        for index in range(self._scanned, len(self.text)):
            if _call_starts_at(self.text, index):
                self.held_from = index
                return self._release(index)
            if _partial_opener_at(self.text, index):
                self._scanned = index
                return self._release(index)
        self._scanned = len(self.text)
        return self._release(len(self.text))

    def _release(self, upto: int) -> str:
        shown, self.released = self.text[self.released : upto], max(self.released, upto)
        return shown

    def _fenced_prose_starts(self) -> int | None:
        """Where the body of a held fence starts, once it is clear the body is not a JSON object."""
        if self.held_from is None or not self.text.startswith("```", self.held_from):
            return None
        head = _FENCE_HEAD.match(self.text, self.held_from)
        return head.start(1) if head is not None and head.group(1) != "{" else None

    @property
    def opener(self) -> str | None:
        """How the held-back part begins: `{`, `<tool_call>` or a fence; None while nothing is held."""
        if self.held_from is None:
            return None
        return next((o for o in _OPENERS if self.text.startswith(o, self.held_from)), "{")

    def opens_call(self) -> bool:
        """The held-back part has begun a JSON object: `{` at a line start, `<tool_call>`, or a fence around `{`."""
        if self.opener in ("{", "<tool_call>"):
            return True
        if self.opener == "```" and self.held_from is not None:
            head = _FENCE_HEAD.match(self.text, self.held_from)
            return head is not None and head.group(1) == "{"
        return False

    def holds_complete_call(self) -> bool:
        """A whole tool call has been written: the rest of the reply would only be thrown away."""
        if self.held_from is None or not _object_closes(self.text, self.held_from):
            return False
        try:
            return bool(parse_tool_calls(self.text[self.held_from :]))
        except MalformedToolCall:
            return False

    def finish(self) -> SplitReply:
        """The reply is complete: the held-back part is either tool calls or, after all, more prose."""
        if self.held_from is not None:
            try:
                calls = parse_tool_calls(self.text[self.held_from :])
            except MalformedToolCall:
                calls = []
            if calls:
                return SplitReply(content="", calls=calls)
        return SplitReply(content=self.text[self.released :], calls=[])


def unwrap_nested_call(call: ParsedCall, tool_names: set[str]) -> ParsedCall:
    """`{"name": "list_files", "arguments": {"name": "find_files", "arguments": {...}}}` is the inner call.

    A small model sometimes labels its call and puts the real one inside; an unknown outer name with a known
    inner call is read as the inner call. Anything else is left as written (unknown names go back as errors).
    """
    if call.name in tool_names:
        return call
    try:
        inner = json.loads(call.arguments)
    except json.JSONDecodeError:
        return call
    if isinstance(inner, dict) and inner.get("name") in tool_names and "arguments" in inner:
        arguments = inner["arguments"]
        return ParsedCall(
            name=inner["name"],
            arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
        )
    return call
