"""Which files a tool result's diff changed, read from the git-style `--- a/path` / `+++ b/path` header pairs."""

from __future__ import annotations

from itertools import pairwise


def _side(header: str, prefix: str) -> str | None:
    """The path a header line names (`--- a/x`, `+++ b/x`), None for /dev/null."""
    name = header.rstrip("\n").partition(" ")[2].split("\t")[0]
    return name[len(prefix) :] if name.startswith(prefix) else None


def changed_paths(diff: str | None) -> frozenset[str]:
    """The workspace-relative paths a unified diff (one file's or several's) names, a deleted file too; lines
    inside hunks are never taken for headers (a header pair is a `---` line followed by a `+++` line)."""
    if not diff:
        return frozenset()
    lines = diff.splitlines()
    found: set[str] = set()
    for old, new in pairwise(lines):
        if old.startswith("--- ") and new.startswith("+++ "):
            found.update(name for name in (_side(old, "a/"), _side(new, "b/")) if name is not None)
    return frozenset(found)
