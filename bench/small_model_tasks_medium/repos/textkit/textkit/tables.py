"""Plain-text tables: columns sized to their widest cell, numbers right-aligned, optional borders."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from textkit.wrap import shorten

NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?$")
BORDERS = {
    "none": {"vertical": "  ", "edge": "", "rule": "-", "cross": "  "},
    "ascii": {"vertical": " | ", "edge": "|", "rule": "-", "cross": "-+-"},
    "unicode": {"vertical": " │ ", "edge": "│", "rule": "─", "cross": "─┼─"},
}


def is_number(cell: str) -> bool:
    """Whether a cell holds a number as tables print them: `12`, `-3.5`, `1,200`, `45%`."""
    return bool(NUMBER.match(cell.strip()))


@dataclass
class Column:
    """One column's width and alignment."""

    width: int
    align: str  # "left" or "right"

    def format(self, cell: str) -> str:
        """`cell` padded to the column's width on the side its alignment leaves free."""
        return cell.rjust(self.width) if self.align == "right" else cell.ljust(self.width)


def column_alignment(cells: Sequence[str]) -> str:
    """How a column is aligned: right when every non-empty cell is a number, else left."""
    filled = [cell for cell in cells if cell.strip()]
    return "right" if filled and all(is_number(cell) for cell in filled) else "left"


def layout(rows: Sequence[Sequence[str]], header: Sequence[str] | None) -> list[Column]:
    """The columns: each as wide as its widest cell (header included), aligned by its body cells."""
    count = max([len(row) for row in rows] + [len(header or [])])
    columns = []
    for index in range(count):
        body = [row[index] if index < len(row) else "" for row in rows]
        head = [header[index]] if header and index < len(header) else []
        width = max(len(cell) for cell in body + head) if body or head else 0
        columns.append(Column(width, column_alignment(body)))
    return columns


def render_table(
    rows: Sequence[Sequence[object]],
    header: Sequence[object] | None = None,
    border: str = "none",
    max_width: int | None = None,
) -> str:
    """`rows` as a text table (cells turned into text with str), with a rule under the header; cells
    wider than `max_width` are shortened with an ellipsis."""
    if border not in BORDERS:
        raise ValueError(f"unknown border {border!r}; choose from {', '.join(BORDERS)}")
    style = BORDERS[border]

    def text(cell: object) -> str:
        value = "" if cell is None else str(cell)
        return shorten(value, max_width) if max_width else value

    body = [[text(cell) for cell in row] for row in rows]
    head = [text(cell) for cell in header] if header is not None else None
    if not body and not head:
        return ""
    columns = layout(body, head)

    def line(cells: Sequence[str]) -> str:
        padded = [
            column.format(cells[index] if index < len(cells) else "")
            for index, column in enumerate(columns)
        ]
        inner = style["vertical"].join(padded)
        if style["edge"]:
            return f"{style['edge']} {inner} {style['edge']}"
        return inner.rstrip()

    lines = []
    if head is not None:
        lines.append(line(head))
        rule = style["cross"].join(style["rule"] * column.width for column in columns)
        lines.append(
            f"{style['edge']}{style['rule']}{rule}{style['rule']}{style['edge']}"
            if style["edge"]
            else rule
        )
    lines.extend(line(row) for row in body)
    return "\n".join(lines)


def render_records(records: Sequence[dict[str, object]], border: str = "none") -> str:
    """A table of dicts, one column per key in order of first appearance."""
    keys: list[str] = []
    for record in records:
        keys.extend(key for key in record if key not in keys)
    rows = [[record.get(key, "") for key in keys] for record in records]
    return render_table(rows, header=keys, border=border)
