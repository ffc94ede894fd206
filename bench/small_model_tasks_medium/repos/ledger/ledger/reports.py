"""Reports over a journal: balances per account, a register of postings, sums per period."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date

from ledger.accounts import ancestors, matches, truncate
from ledger.dates import Period, period_of, periods_between
from ledger.journal import Journal
from ledger.money import Money


@dataclass
class Balance:
    """What an account holds: one amount per currency (its sub-accounts included)."""

    account: str
    amounts: dict[str, Money]

    def sorted_amounts(self) -> list[Money]:
        """The amounts by currency code, the zero ones left out."""
        return [self.amounts[code] for code in sorted(self.amounts) if self.amounts[code]]


def balances(
    journal: Journal,
    depth: int | None = None,
    pattern: str | None = None,
    until: date | None = None,
) -> list[Balance]:
    """Every account's balance (its children's included), by account name; accounts deeper than
    `depth` are folded into their parent; `pattern` keeps only the matching accounts."""
    sums: dict[str, dict[str, Money]] = defaultdict(dict)
    for transaction in journal.transactions:
        if until is not None and transaction.day > until:
            continue
        for account, amount in transaction.amounts():
            if pattern and not matches(account, pattern):
                continue
            name = truncate(account, depth) if depth else account
            for level in ancestors(name):
                held = sums[level].get(amount.currency, Money.zero(amount.currency))
                sums[level][amount.currency] = held + amount
    return [Balance(name, sums[name]) for name in sorted(sums)]


def total_balance(rows: list[Balance]) -> dict[str, Money]:
    """The sum of the top-level balances, per currency (zero for a balanced journal)."""
    totals: dict[str, Money] = {}
    for row in rows:
        if ":" in row.account:
            continue
        for code, amount in row.amounts.items():
            totals[code] = totals.get(code, Money.zero(code)) + amount
    return totals


@dataclass
class RegisterLine:
    """One posting in a register, with the running total of the postings shown so far."""

    day: date
    description: str
    account: str
    amount: Money
    running: Money


def register(journal: Journal, pattern: str | None = None) -> list[RegisterLine]:
    """The postings of matching accounts in date order, with a running total per currency."""
    running: dict[str, Money] = {}
    lines: list[RegisterLine] = []
    for transaction in journal.sorted():
        for account, amount in transaction.amounts():
            if pattern and not matches(account, pattern):
                continue
            code = amount.currency
            running[code] = running.get(code, Money.zero(code)) + amount
            lines.append(
                RegisterLine(
                    transaction.day, transaction.description, account, amount, running[code]
                )
            )
    return lines


def periodic(journal: Journal, by: str, pattern: str | None = None) -> list[tuple[Period, Money]]:
    """The sum of matching postings per period (month, quarter or year), every period from the first
    transaction to the last listed, the empty ones with zero. One currency: the journal's default."""
    ordered = journal.sorted()
    if not ordered:
        return []
    currency = journal.default_currency
    sums: dict[Period, Money] = {}
    for transaction in ordered:
        period = period_of(transaction.day, by)
        for account, amount in transaction.amounts():
            if amount.currency != currency or (pattern and not matches(account, pattern)):
                continue
            sums[period] = sums.get(period, Money.zero(currency)) + amount
    every = periods_between(ordered[0].day, ordered[-1].day, by)
    return [(period, sums.get(period, Money.zero(currency))) for period in every]
