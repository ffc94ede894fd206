"""The text tool-call protocol: for models without native tool calls, calls are parsed out of the reply text."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```(?:json|tool_call|tool)?\s*\n?(.*?)(?:```|$)", re.DOTALL)


class MalformedToolCall(Exception):
    """The reply meant to call a tool (it used the tags) but no call could be read from it."""


class ParsedCall(BaseModel):
    """A call found in text; arguments stay raw JSON text so the registry validates them like native ones."""

    name: str
    arguments: str


def _repair(candidate: str, close: bool) -> Any:
    """Decode a JSON object, closing braces a small model forgot (if `close`); None when it is not one."""
    candidate = candidate.strip()
    if not candidate.startswith("{"):
        return None
    for extra in ("", "}", "}}", '"}', '"}}') if close else ("",):
        try:
            return json.loads(candidate + extra)
        except json.JSONDecodeError:
            continue
    return None


def object_end(text: str, start: int) -> int | None:
    """Index of the brace closing the JSON object that opens at `start` (braces in strings ignored)."""
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                return index
    return None


def _leading_object(text: str) -> str | None:
    """The first balanced-looking `{...}` of text (or its unterminated rest)."""
    start = text.find("{")
    if start < 0:
        return None
    end = object_end(text, start)
    return text[start:] if end is None else text[start : end + 1]


def as_call(value: Any) -> ParsedCall | None:
    """A decoded JSON value as a call: an object with a name (or tool) and its arguments; None otherwise."""
    if not isinstance(value, dict):
        return None
    name = value.get("name") or value.get("tool")
    if not isinstance(name, str) or not name:
        return None
    arguments = value.get("arguments", value.get("parameters", value.get("args", {})))
    if not isinstance(arguments, (dict, str)):
        return None
    return ParsedCall(
        name=name, arguments=arguments if isinstance(arguments, str) else json.dumps(arguments)
    )


def _calls_in(blocks: list[str], close: bool) -> list[ParsedCall]:
    calls: list[ParsedCall] = []
    for block in blocks:
        value = _repair(_leading_object(block) or "", close)
        items = value if isinstance(value, list) else [value]
        calls.extend(call for call in map(as_call, items) if call is not None)
    return calls


def parse_tool_calls(text: str, complete: bool = False) -> list[ParsedCall]:
    """Calls in `<tool_call>` tags, else in fenced JSON blocks, else a bare JSON object that is the reply.
    With `complete`, a call whose object does not close is not read (a reply the length limit cut off)."""
    close = not complete
    if "<tool_call>" in text:
        calls = _calls_in(_TAGGED.findall(text), close)
        if not calls:
            raise MalformedToolCall(
                'your <tool_call> could not be read: put exactly one JSON object with "name" and '
                '"arguments" inside the tags, e.g. <tool_call>{"name": "read_file", "arguments": '
                '{"path": "README.md"}}</tool_call>'
            )
        return calls
    if "```" in text:
        fenced = _calls_in(_FENCED.findall(text), close)
        if fenced:
            return fenced
    stripped = text.strip()
    if stripped.startswith("{"):
        return _calls_in([stripped], close)
    return []
