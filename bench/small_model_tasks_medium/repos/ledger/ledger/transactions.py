"""Transactions and their postings; balancing fills in the one posting left without an amount."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from ledger.money import Money


class UnbalancedError(ValueError):
    """A transaction whose postings do not add up to zero."""


@dataclass
class Posting:
    """One line of a transaction: an account and the amount it moves (None until balanced)."""

    account: str
    amount: Money | None = None
    comment: str = ""


@dataclass
class Transaction:
    """A dated, described set of postings that add up to zero in every currency."""

    day: date
    description: str
    postings: list[Posting] = field(default_factory=list)
    status: str = ""  # "*" cleared, "!" pending, "" neither
    comment: str = ""
    line: int = 0  # where it starts in its journal, for error messages

    @property
    def cleared(self) -> bool:
        """Whether the transaction is marked cleared (`*`)."""
        return self.status == "*"

    def sums(self) -> dict[str, Money]:
        """The sum of the postings that have an amount, per currency."""
        sums: dict[str, Money] = {}
        for posting in self.postings:
            if posting.amount is None:
                continue
            currency = posting.amount.currency
            sums[currency] = sums.get(currency, Money.zero(currency)) + posting.amount
        return sums

    def balance(self) -> Transaction:
        """Fill in the posting without an amount, then check every currency sums to zero."""
        missing = [posting for posting in self.postings if posting.amount is None]
        where = f"line {self.line}: {self.day} {self.description}"
        if len(self.postings) < 2:
            raise UnbalancedError(f"{where}: a transaction needs at least two postings")
        if len(missing) > 1:
            raise UnbalancedError(f"{where}: only one posting may leave its amount out")
        sums = self.sums()
        if missing:
            if len(sums) != 1:
                raise UnbalancedError(
                    f"{where}: cannot infer the amount of {missing[0].account} across "
                    f"{len(sums)} currencies; write it"
                )
            (rest,) = sums.values()
            missing[0].amount = -rest
            return self
        off = {currency: amount for currency, amount in sums.items() if amount}
        if off:
            shown = ", ".join(str(amount) for amount in off.values())
            raise UnbalancedError(f"{where}: the postings add up to {shown}, not zero")
        return self

    def amounts(self) -> list[tuple[str, Money]]:
        """(account, amount) for every posting, once balanced."""
        return [(p.account, p.amount) for p in self.postings if p.amount is not None]
