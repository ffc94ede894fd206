"""Reading a session log's lines with a bound: a line too long to load is read in part and kept with its long
text cut, so one huge event cannot make a resume spend minutes and gigabytes."""

from __future__ import annotations

import json
import re
from typing import BinaryIO

from pydantic import ValidationError

from keel.agent.core.protocol import AnyEvent, parse_event
from keel.prompts import plural, render

MAX_LINE_BYTES = 4 * 1024 * 1024  # far above any event keel writes in a normal session
_SKIP_CHUNK = 1 << 20
# a JSON string (closed, or open to the end of the text) or a bracket; everything else is skipped over
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]')
_CLOSERS = {ord("{"): b"}", ord("["): b"]"}


def read_line_events(file: BinaryIO, limit: int = MAX_LINE_BYTES) -> list[AnyEvent]:
    """Every event of a log, skipping a torn or unreadable line; a line over `limit` bytes is salvaged from
    its first `limit` bytes (the rest is skipped unread into memory) or dropped."""
    events: list[AnyEvent] = []
    while line := file.readline(limit + 1):
        if len(line) > limit and not line.endswith(b"\n"):
            event = salvage_line(line[:limit], limit + 1 + _skip_rest(file), limit)
        elif line.strip():
            try:
                event = parse_event(line)
            except ValidationError:
                event = None
        else:
            event = None
        if event is not None:
            events.append(event)
    return events


def _skip_rest(file: BinaryIO) -> int:
    """Read past the rest of the current line in bounded chunks; how many bytes it had."""
    skipped = 0
    while chunk := file.readline(_SKIP_CHUNK):
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return skipped


def salvage_line(head: bytes, size: int, limit: int) -> AnyEvent | None:
    """The event whose JSON line starts with `head`: the string cut off is closed with a note saying so, and
    the open objects and lists are closed; None when the cut falls where no string is open. Token ids
    (`tokens`, written last) are dropped whole rather than kept in part."""
    tokens_at = head.rfind(b',"tokens":')  # outside a string: quotes inside strings are escaped
    if tokens_at > 0:
        head = head[:tokens_at]
    stack: list[int] = []
    open_string = False
    for match in _TOKEN.finditer(head):
        token = match.group()
        if token[0] == ord('"'):
            open_string = len(token) == 1 or not token.endswith(b'"')
        elif token in (b"{", b"["):
            stack.append(token[0])
        elif stack:
            stack.pop()
    if open_string:
        text = head.decode("utf-8", errors="ignore")
        if (len(text) - len(text.rstrip("\\"))) % 2:
            text = text[:-1]  # a lone backslash would escape the closing quote
        note = render(
            "cut_content",
            cut=plural(size - len(head), "byte"),
            reason=f"the session log's line was {size:,} bytes, over the {limit:,} a resume loads",
        )
        head = (text + json.dumps(" " + note)[1:-1] + '"').encode("utf-8")
    elif tokens_at <= 0:
        return None
    head += b"".join(_CLOSERS[opener] for opener in reversed(stack))
    try:
        return parse_event(head)
    except ValidationError:
        return None
