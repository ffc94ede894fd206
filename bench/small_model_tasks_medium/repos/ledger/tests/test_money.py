from decimal import Decimal

import pytest

from ledger.money import Money, MoneyError, total


def test_parse_plain_and_with_currency():
    assert Money.parse("12.50") == Money(Decimal("12.50"), "EUR")
    assert Money.parse("-3 USD") == Money(Decimal(-3), "USD")
    assert Money.parse("$1,200.00") == Money(Decimal(1200), "USD")
    assert Money.parse(".5 GBP") == Money(Decimal("0.50"), "GBP")


def test_yen_has_no_decimals():
    assert str(Money.parse("1500 JPY")) == "1,500 JPY"


def test_not_an_amount():
    with pytest.raises(MoneyError):
        Money.parse("twelve")


def test_currencies_do_not_mix():
    with pytest.raises(MoneyError):
        Money.parse("1 EUR") + Money.parse("1 USD")


def test_split_keeps_every_cent():
    parts = Money.parse("10.00").split(3)
    assert [str(part) for part in parts] == ["3.34 EUR", "3.33 EUR", "3.33 EUR"]
    assert total(parts) == Money.parse("10.00")
