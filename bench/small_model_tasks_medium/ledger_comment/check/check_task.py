from ledger.cli import main
from ledger.journal import read_text

JOURNAL = """\
2024-01-03 Groceries  ; weekly shop
    expenses:food          23.40 ; lunch
    expenses:household      5.10  ;  soap
    assets:checking               ; paid by card
"""


def test_comments_after_amounts():
    (transaction,) = read_text(JOURNAL).transactions
    assert transaction.comment == "weekly shop"
    food, household, checking = transaction.postings
    assert (str(food.amount), food.comment) == ("23.40 EUR", "lunch")
    assert (str(household.amount), household.comment) == ("5.10 EUR", "soap")
    assert (str(checking.amount), checking.comment) == ("-28.50 EUR", "paid by card")


def test_the_balance_command_reads_them(tmp_path, capsys):
    journal = tmp_path / "home.journal"
    journal.write_text(JOURNAL)
    assert main(["balance", str(journal), "--flat", "--account", "expenses"]) == 0
    assert "28.50 EUR" in capsys.readouterr().out
