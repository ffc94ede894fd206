"""Per-message work on requests done once: results kept, by identity, for the last request's messages.

A request's messages are the cached, unchanging dicts of keel.agent.core.messages.to_wire (and redaction's
copies of them, kept stable by this same cache), so a message seen in the last request is the same
object now; anything it does not know is worked out again. Only the last request's messages are
held, so the cache keeps nothing alive that the history does not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

Result = TypeVar("Result")


class LastRequestCache(Generic[Result]):
    """`make(message)` for each message, reusing the results for messages of the previous call."""

    def __init__(self, make: Callable[[dict[str, Any]], Result]) -> None:
        self._make = make
        self._known: dict[int, tuple[dict[str, Any], Result]] = {}

    def map(self, messages: list[dict[str, Any]]) -> list[Result]:
        known, self._known = self._known, {}
        results = []
        for message in messages:
            pair = known.get(id(message))
            if pair is None or pair[0] is not message:
                pair = (message, self._make(message))
            self._known[id(message)] = pair
            results.append(pair[1])
        return results
