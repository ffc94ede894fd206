"""The prompt box's history: up and down walk past entries, keeping the draft being typed."""

from __future__ import annotations


class InputHistory:
    def __init__(self, limit: int = 500) -> None:
        self.limit = limit
        self.items: list[str] = []
        self._position: int | None = None
        self._draft = ""

    def add(self, text: str) -> None:
        if text.strip() and (not self.items or self.items[-1] != text):
            self.items.append(text)
            del self.items[: -self.limit]
        self._position = None

    def previous(self, current: str) -> str | None:
        """The entry before the one shown (the newest first); None at the oldest."""
        if not self.items:
            return None
        if self._position is None:
            self._draft = current
            self._position = len(self.items)
        if self._position == 0:
            return None
        self._position -= 1
        return self.items[self._position]

    def next(self) -> str | None:
        """The entry after the one shown; past the newest, the draft comes back; None when not browsing."""
        if self._position is None:
            return None
        self._position += 1
        if self._position >= len(self.items):
            self._position = None
            return self._draft
        return self.items[self._position]
