from ledger.journal import read_text
from ledger.reports import balances, periodic, register, total_balance

JOURNAL = """\
2024-01-03 Groceries
    expenses:food          23.40
    assets:checking
2024-01-20 Restaurant
    expenses:food:restaurant  41.00
    assets:checking
2024-02-01 Rent
    expenses:rent         900.00
    assets:checking
"""


def test_balances_include_sub_accounts():
    rows = {row.account: row for row in balances(read_text(JOURNAL))}
    assert str(rows["expenses:food"].amounts["EUR"]) == "64.40 EUR"
    assert str(rows["expenses"].amounts["EUR"]) == "964.40 EUR"
    assert not any(total_balance(list(rows.values())).values())


def test_register_runs_a_total():
    lines = register(read_text(JOURNAL), "expenses")
    assert [str(line.running) for line in lines] == ["23.40 EUR", "64.40 EUR", "964.40 EUR"]


def test_monthly_report():
    rows = periodic(read_text(JOURNAL), "month", "expenses")
    assert [(period.label, str(amount)) for period, amount in rows] == [
        ("2024-01", "64.40 EUR"),
        ("2024-02", "900.00 EUR"),
    ]
