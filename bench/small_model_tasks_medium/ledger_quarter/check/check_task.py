from datetime import date

from ledger.cli import main
from ledger.dates import parse_period, period_of

JOURNAL = """\
2024-03-31 Rent
    expenses:rent   900.00
    assets:checking
2024-06-15 Shoes
    expenses:clothes   80.00
    assets:checking
2024-12-24 Presents
    expenses:gifts   120.00
    assets:checking
"""


def test_quarters_of_every_month():
    labels = [period_of(date(2024, month, 1), "quarter").label for month in range(1, 13)]
    assert labels == [f"2024-Q{(month - 1) // 3 + 1}" for month in range(1, 13)]


def test_period_bounds():
    period = period_of(date(2024, 12, 24), "quarter")
    assert (period.first, period.last) == (date(2024, 10, 1), date(2024, 12, 31))
    assert parse_period("2024-Q1").last == date(2024, 3, 31)


def test_the_quarterly_report(tmp_path, capsys):
    journal = tmp_path / "home.journal"
    journal.write_text(JOURNAL)
    assert main(["report", str(journal), "--by", "quarter", "--account", "expenses"]) == 0
    rows = [line.split(None, 1) for line in capsys.readouterr().out.splitlines()[2:]]
    assert rows == [
        ["2024-Q1", "900.00 EUR"],
        ["2024-Q2", "80.00 EUR"],
        ["2024-Q3", "0.00 EUR"],
        ["2024-Q4", "120.00 EUR"],
    ]
