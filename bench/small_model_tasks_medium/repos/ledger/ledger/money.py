"""Exact amounts of money: a Decimal quantized to its currency's minor unit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from ledger.currencies import DEFAULT_CURRENCY, minor_digits

AMOUNT = re.compile(
    r"^\s*(?P<sign>[-+])?\s*(?P<symbol>[$€£¥])?\s*(?P<number>\d[\d,]*(?:\.\d+)?|\.\d+)"
    r"\s*(?P<code>[A-Z]{3})?\s*$"
)
SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}


class MoneyError(ValueError):
    """An amount that cannot be read, or arithmetic across currencies."""


def quantize(value: Decimal, currency: str) -> Decimal:
    """`value` rounded to the number of decimals `currency` uses."""
    exponent = Decimal(1).scaleb(-minor_digits(currency))
    return value.quantize(exponent, rounding=ROUND_HALF_UP)


@dataclass(frozen=True, order=True)
class Money:
    """An amount in one currency. Arithmetic keeps the currency and refuses to mix two."""

    amount: Decimal
    currency: str = DEFAULT_CURRENCY

    def __post_init__(self) -> None:
        object.__setattr__(self, "amount", quantize(Decimal(self.amount), self.currency))

    @classmethod
    def zero(cls, currency: str = DEFAULT_CURRENCY) -> Money:
        """No money, in `currency`."""
        return cls(Decimal(0), currency)

    @classmethod
    def parse(cls, text: str, default_currency: str = DEFAULT_CURRENCY) -> Money:
        """An amount as a journal writes it: `12.50`, `-3 EUR`, `$1,200.00`, `.5 GBP`."""
        match = AMOUNT.match(text)
        if match is None:
            raise MoneyError(f"not an amount: {text!r}")
        number = match["number"].replace(",", "")
        code = match["code"] or SYMBOLS.get(match["symbol"] or "", default_currency)
        try:
            value = Decimal(number)
        except InvalidOperation as exc:
            raise MoneyError(f"not an amount: {text!r}") from exc
        if match["sign"] == "-":
            value = -value
        return cls(value, code)

    def _check(self, other: Money) -> None:
        if not isinstance(other, Money):
            raise TypeError(f"cannot combine Money with {type(other).__name__}")
        if other.currency != self.currency:
            raise MoneyError(f"cannot combine {self.currency} with {other.currency}")

    def __add__(self, other: Money) -> Money:
        self._check(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._check(other)
        return Money(self.amount - other.amount, self.currency)

    def __neg__(self) -> Money:
        return Money(-self.amount, self.currency)

    def __abs__(self) -> Money:
        return Money(abs(self.amount), self.currency)

    def __mul__(self, factor: int | Decimal) -> Money:
        if isinstance(factor, float):
            raise TypeError("multiply Money by an int or a Decimal, not a float")
        return Money(self.amount * Decimal(factor), self.currency)

    __rmul__ = __mul__

    def __bool__(self) -> bool:
        return self.amount != 0

    def is_negative(self) -> bool:
        """Whether the amount is below zero."""
        return self.amount < 0

    def split(self, parts: int) -> list[Money]:
        """`parts` amounts that add up to exactly this one, the remainder spread from the first."""
        if parts < 1:
            raise ValueError("split into at least one part")
        unit = Decimal(1).scaleb(-minor_digits(self.currency))
        minor_total = int(self.amount / unit)
        base, remainder = divmod(abs(minor_total), parts)
        sign = -1 if minor_total < 0 else 1
        return [
            Money(sign * (base + (1 if index < remainder else 0)) * unit, self.currency)
            for index in range(parts)
        ]

    def __str__(self) -> str:
        return f"{self.amount:,.{minor_digits(self.currency)}f} {self.currency}"


def total(amounts: list[Money], currency: str = DEFAULT_CURRENCY) -> Money:
    """The sum of `amounts` (zero in `currency` when there are none)."""
    result = Money.zero(amounts[0].currency if amounts else currency)
    for amount in amounts:
        result = result + amount
    return result
