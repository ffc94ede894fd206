"""Per-message work on requests done once: results kept, by identity, for the last request's messages.

A request's messages are the cached, unchanging dicts of keel.agent.core.messages.to_wire (and redaction's
copies of them, kept stable by this same cache), so a message seen in the last request is the same
object now; anything it does not know is worked out again. Only the last request's messages are
held, so the cache keeps nothing alive that the history does not.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Generic, TypeVar

Result = TypeVar("Result")


class LastRequestCache(Generic[Result]):
    """`make(message)` for each message, reusing the results for messages of the previous call."""

    def __init__(self, make: Callable[[dict[str, Any]], Result]) -> None:
        self._make = make
        self._messages: list[dict[str, Any]] = []
        self._results: list[Result] = []

    def map(self, messages: list[dict[str, Any]]) -> list[Result]:
        # a request repeats the last one's messages and adds a few: the shared head is compared in C
        same = list(map(operator.is_, self._messages, messages))
        shared = same.index(False) if False in same else len(same)
        results = self._results[:shared]
        if shared < len(messages):
            moved = {
                id(message): (message, result)
                for message, result in zip(self._messages[shared:], self._results[shared:])
            }
            for message in messages[shared:]:
                pair = moved.get(id(message))
                results.append(pair[1] if pair is not None else self._make(message))
        self._messages, self._results = list(messages), results
        return results
