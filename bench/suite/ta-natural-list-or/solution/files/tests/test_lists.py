from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

import humanize


@pytest.mark.parametrize(
    "test_args, expected",
    [
        ([["1", "2", "3"]], "1, 2 and 3"),
        ([["one", "two", "three"]], "one, two and three"),
        ([["one", "two"]], "one and two"),
        ([["one"]], "one"),
        ([[]], ""),
        ([[""]], ""),
        ([[1, 2, 3]], "1, 2 and 3"),
        ([[1, "two"]], "1 and two"),
        ([("one", "two", "three")], "one, two and three"),
        ([("one", "two")], "one and two"),
        ([("one",)], "one"),
        ([{"one": 1, "two": 2}.keys()], "one and two"),
        ([(x for x in ["one", "two", "three"])], "one, two and three"),
        ([range(1, 4)], "1, 2 and 3"),
    ],
)
def test_natural_list(test_args: Iterable[Any], expected: str) -> None:
    assert humanize.natural_list(*test_args) == expected


@pytest.mark.parametrize(
    "test_args, test_kwargs, expected",
    [
        ([["one", "two", "three"]], {"conjunction": "or"}, "one, two or three"),
        ([["one", "two"]], {"conjunction": "or"}, "one or two"),
        ([["one"]], {"conjunction": "or"}, "one"),
        ([[]], {"conjunction": "or"}, ""),
        ([["one", "two", "three"]], {"oxford_comma": True}, "one, two, and three"),
        ([["one", "two"]], {"oxford_comma": True}, "one and two"),
        ([["one"]], {"oxford_comma": True}, "one"),
        (
            [[1, 2, 3, 4]],
            {"conjunction": "or", "oxford_comma": True},
            "1, 2, 3, or 4",
        ),
        ([["a", "b", "c"]], {"oxford_comma": False}, "a, b and c"),
    ],
)
def test_natural_list_options(
    test_args: Iterable[Any], test_kwargs: dict[str, Any], expected: str
) -> None:
    assert humanize.natural_list(*test_args, **test_kwargs) == expected
