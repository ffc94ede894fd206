"""Accounts: colon-separated names forming a tree (`expenses:food:restaurant`), and their kinds."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

SEPARATOR = ":"
KINDS = ("assets", "liabilities", "equity", "income", "expenses")
NAME = re.compile(r"^[\w][\w\- ]*(?::[\w][\w\- ]*)*$")


class AccountError(ValueError):
    """An account name that is not valid."""


def check_name(name: str) -> str:
    """`name` when it is a valid account name (letters, digits, `-`, spaces, parts split by `:`)."""
    if not NAME.match(name) or name != name.strip():
        raise AccountError(f"not an account name: {name!r}")
    return name


def parts(name: str) -> list[str]:
    """The levels of an account name: `a:b:c` -> [a, b, c]."""
    return name.split(SEPARATOR)


def parent(name: str) -> str | None:
    """The parent account (`a:b` for `a:b:c`), None for a top-level one."""
    head, _, _tail = name.rpartition(SEPARATOR)
    return head or None


def ancestors(name: str) -> list[str]:
    """The account and every account above it, the top first: `a:b:c` -> [a, a:b, a:b:c]."""
    levels = parts(name)
    return [SEPARATOR.join(levels[: depth + 1]) for depth in range(len(levels))]


def depth(name: str) -> int:
    """How deep an account is: 1 for `assets`, 3 for `expenses:food:restaurant`."""
    return len(parts(name))


def truncate(name: str, max_depth: int) -> str:
    """The account at `max_depth` levels at most (`a:b` for `a:b:c` at depth 2)."""
    return SEPARATOR.join(parts(name)[:max_depth])


def kind(name: str) -> str | None:
    """Which of the five kinds an account belongs to, by its top level (None for another name)."""
    top = parts(name)[0].lower()
    return top if top in KINDS else None


def is_debit_normal(name: str) -> bool:
    """Whether the account's balance is normally positive (assets, expenses)."""
    return kind(name) in ("assets", "expenses")


def matches(name: str, pattern: str) -> bool:
    """Whether an account matches a pattern: a glob (`expenses:*`), or a prefix of whole levels."""
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return name == pattern or name.startswith(pattern + SEPARATOR)


@dataclass
class AccountTree:
    """Every account named in a journal, with the parents they imply."""

    names: set[str] = field(default_factory=set)

    def add(self, name: str) -> None:
        """Add an account and all its parents."""
        self.names.update(ancestors(check_name(name)))

    def update(self, names: Iterable[str]) -> None:
        """Add several accounts."""
        for name in names:
            self.add(name)

    def children(self, name: str | None) -> list[str]:
        """The accounts directly under `name` (the top-level ones for None), sorted."""
        return sorted(other for other in self.names if parent(other) == name)

    def walk(self, name: str | None = None) -> Iterator[str]:
        """Every account under `name`, depth first, each before its children."""
        for child in self.children(name):
            yield child
            yield from self.walk(child)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __len__(self) -> int:
        return len(self.names)
