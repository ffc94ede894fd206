from decimal import Decimal

from ledger.journal import read_text
from ledger.money import Money


def test_amounts_round_half_up():
    assert str(Money.parse("2.675")) == "2.68 EUR"
    assert str(Money.parse("2.674")) == "2.67 EUR"
    assert str(Money.parse("-2.675")) == "-2.68 EUR"
    assert str(Money.parse("1,234.5 JPY")) == "1,235 JPY"
    assert str(Money.parse("0.0005 KWD")) == "0.001 KWD"


def test_arithmetic_rounds_too():
    assert Money(Decimal("10.00")) * Decimal("0.125") == Money(Decimal("1.25"))
    assert Money(Decimal("0.10")) * Decimal("0.05") == Money(Decimal("0.01"))


def test_a_journal_with_extra_decimals():
    journal = read_text("2024-01-01 Fuel\n    expenses:car  45.555\n    assets:cash\n")
    assert [str(p.amount) for p in journal.transactions[0].postings] == ["45.56 EUR", "-45.56 EUR"]
