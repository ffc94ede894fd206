"""Budgets: a monthly amount per account, compared with what a period actually spent."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from ledger.accounts import check_name, matches
from ledger.dates import Period
from ledger.journal import Journal, is_comment, strip_comment
from ledger.money import Money


class BudgetError(ValueError):
    """A budget file that cannot be read."""


@dataclass
class BudgetLine:
    """How one account did against its budget in a period."""

    account: str
    budget: Money
    spent: Money

    @property
    def left(self) -> Money:
        """What is left of the budget (negative when overspent)."""
        return self.budget - self.spent

    @property
    def over(self) -> bool:
        """Whether more was spent than budgeted."""
        return self.spent.amount > self.budget.amount


def read_budget(text: str, currency: str) -> dict[str, Money]:
    """A budget file: lines of `account  monthly amount`, comments allowed."""
    budget: dict[str, Money] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or is_comment(line):
            continue
        body, _comment = strip_comment(line)
        try:
            account, amount = body.split(None, 1)
            budget[check_name(account)] = Money.parse(amount, currency)
        except ValueError as exc:
            raise BudgetError(f"budget line {number}: {exc}") from exc
    return budget


def months_in(period: Period) -> Decimal:
    """How many months a period spans (12 for a year, 3 for a quarter), for scaling a monthly budget."""
    months = (
        (period.last.year - period.first.year) * 12 + period.last.month - period.first.month + 1
    )
    return Decimal(months)


def compare(journal: Journal, budget: dict[str, Money], period: Period) -> list[BudgetLine]:
    """Each budgeted account's spending in `period` against its budget scaled to the period."""
    lines = []
    for account, monthly in sorted(budget.items()):
        spent = Money.zero(monthly.currency)
        for transaction in journal.transactions:
            if transaction.day not in period:
                continue
            for name, amount in transaction.amounts():
                if matches(name, account) and amount.currency == monthly.currency:
                    spent = spent + amount
        lines.append(BudgetLine(account, monthly * months_in(period), spent))
    return lines


def load_budget(path: Path | str, currency: str) -> dict[str, Money]:
    """Read a budget file."""
    try:
        return read_budget(Path(path).read_text(encoding="utf-8"), currency)
    except OSError as exc:
        raise BudgetError(f"cannot read {path}: {exc.strerror}") from exc
