"""`dataclasses.replace` for the frozen state classes the fold copies on every event: the instance's dict with
the changes, without running the class's __init__ over every field (several applies per step, per rollout)."""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from typing import Any, TypeVar

State = TypeVar("State")


def replaced(instance: State, **changes: Any) -> State:
    """A copy of a frozen dataclass instance with `changes`; TypeError for a name that is not a field."""
    cls: type = type(instance)
    unknown = changes.keys() - _field_names(cls)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {sorted(unknown)}")
    new: State = object.__new__(cls)
    new.__dict__.update(instance.__dict__, **changes)
    return new


@cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(field.name for field in fields(cls))
