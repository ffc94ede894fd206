"""Text output: amounts lined up in columns, account trees indented, tables with a rule."""

from __future__ import annotations

from collections.abc import Sequence

from ledger.accounts import depth, parts
from ledger.money import Money

INDENT = "  "


def amount_text(amount: Money, width: int = 0) -> str:
    """An amount right-aligned in `width` characters (its natural width for 0)."""
    return str(amount).rjust(width)


def amounts_text(amounts: Sequence[Money], width: int = 0) -> list[str]:
    """Several amounts (one per currency), each right-aligned; `0` when there are none."""
    if not amounts:
        return ["0".rjust(width)]
    return [amount_text(amount, width) for amount in amounts]


def account_label(name: str, tree: bool) -> str:
    """An account as a tree shows it (its last level, indented by depth), or its full name."""
    if not tree:
        return name
    return INDENT * (depth(name) - 1) + parts(name)[-1]


def table(rows: Sequence[Sequence[str]], header: Sequence[str] | None = None) -> str:
    """Rows as aligned columns: the first left-aligned, the others right-aligned; a rule under the
    header."""
    all_rows = [list(header)] if header else []
    all_rows += [list(row) for row in rows]
    if not all_rows:
        return ""
    columns = max(len(row) for row in all_rows)
    for row in all_rows:
        row.extend([""] * (columns - len(row)))
    widths = [max(len(row[index]) for row in all_rows) for index in range(columns)]

    def line(row: list[str]) -> str:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        return "  ".join(cells).rstrip()

    lines = [line(row) for row in all_rows]
    if header:
        lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def percent(part: Money, whole: Money) -> str:
    """`part` as a share of `whole`, "12.5%"; "-" when `whole` is zero."""
    if not whole:
        return "-"
    return f"{100 * part.amount / whole.amount:.1f}%"
