"""Front ends found by their `keel.frontends` entry point, so the core never imports them.

keel's own distribution is read first: importlib.metadata costs some 25 ms to import and scans
every installed distribution, on every launch of the TUI. The scan stays as the fallback for a
front end another distribution provides.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

GROUP = "keel.frontends"
DISTRIBUTION = "keel"


def load_frontend(name: str) -> Callable[..., Any] | None:
    """The object the entry point `name` of the group names, imported; None if nothing provides it."""
    target = _own_entry_point(name) or _any_entry_point(name)
    if target is None:
        return None
    module, _, attribute = target.partition(":")
    found: Any = importlib.import_module(module.strip())
    for part in attribute.split("[")[0].strip().split("."):
        found = getattr(found, part)
    return cast(Callable[..., Any], found)


def _own_entry_point(name: str) -> str | None:
    """`module:attribute` from keel's own `*.dist-info/entry_points.txt` on sys.path, if there is one."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for dist_info in names:
            if dist_info.endswith(".dist-info") and dist_info.split("-")[0] == DISTRIBUTION:
                path = Path(entry or ".", dist_info, "entry_points.txt")
                try:
                    return entry_point_in(path.read_text(encoding="utf-8"), GROUP, name)
                except OSError:
                    return None
    return None


def entry_point_in(text: str, group: str, name: str) -> str | None:
    """The value of `name` in the `[group]` section of an entry_points.txt."""
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group and "=" in line:
            key, _, value = line.partition("=")
            if key.strip() == name:
                return value.strip()
    return None


def _any_entry_point(name: str) -> str | None:
    from importlib.metadata import entry_points

    found = entry_points(group=GROUP, name=name)
    return next(iter(found)).value if found else None
