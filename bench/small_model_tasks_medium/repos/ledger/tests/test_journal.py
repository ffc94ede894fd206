import pytest

from ledger.journal import JournalError, read_text

JOURNAL = """\
; household journal
2024-01-03 Groceries
    expenses:food          23.40
    assets:checking

2024-01-05 * Salary
    assets:checking      2500.00
    income:salary
"""


def test_transactions_are_read_and_balanced():
    journal = read_text(JOURNAL)
    groceries, salary = journal.transactions
    assert groceries.description == "Groceries"
    assert str(groceries.postings[1].amount) == "-23.40 EUR"
    assert salary.cleared
    assert "expenses" in journal.accounts and "expenses:food" in journal.accounts


def test_an_unbalanced_transaction_names_its_line():
    text = "2024-02-01 Oops\n    expenses:food  10.00\n    assets:cash  -9.00\n"
    with pytest.raises(JournalError, match="line 1"):
        read_text(text)


def test_the_default_currency_directive():
    journal = read_text("D USD\n" + JOURNAL)
    assert journal.transactions[0].postings[0].amount.currency == "USD"
