"""How a small model is asked to edit a file, by its size (aider's insight): a small file whole, where a snippet's
exact copy is the hard part; a large one by search/replace (edit_file), where the whole would not fit its reply."""

from __future__ import annotations

from typing import Literal

WHOLE_FILE_MAX_LINES = (
    150  # about 5k characters of code: the most a small model rewrites reliably in a reply
)

EditFormat = Literal["whole", "search_replace"]


def edit_format(text: str, max_lines: int = WHOLE_FILE_MAX_LINES) -> EditFormat:
    """`whole` for a file of at most `max_lines` lines, `search_replace` for a longer one."""
    return (
        "whole" if text.count("\n") + (not text.endswith("\n")) <= max_lines else "search_replace"
    )
