"""The `ledger` command line: balance, register, report, budget and accounts over a journal file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ledger.budget import BudgetError, compare, load_budget
from ledger.dates import PERIODS, DateError, parse_period
from ledger.formatting import account_label, amounts_text, percent, table
from ledger.journal import Journal, JournalError, read_file
from ledger.reports import balances, periodic, register, total_balance


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-command per report."""
    parser = argparse.ArgumentParser(prog="ledger", description="Plain-text bookkeeping.")
    commands = parser.add_subparsers(dest="command", required=True)

    balance = commands.add_parser("balance", help="the balance of every account")
    balance.add_argument("journal")
    balance.add_argument("--depth", type=int, help="fold accounts deeper than this")
    balance.add_argument("--account", help="only accounts matching this pattern")
    balance.add_argument("--flat", action="store_true", help="full names instead of a tree")

    reg = commands.add_parser("register", help="postings with a running total")
    reg.add_argument("journal")
    reg.add_argument("--account", help="only accounts matching this pattern")

    report = commands.add_parser("report", help="sums per period")
    report.add_argument("journal")
    report.add_argument("--by", choices=PERIODS, default="month")
    report.add_argument("--account", help="only accounts matching this pattern")

    budget = commands.add_parser("budget", help="spending against a monthly budget")
    budget.add_argument("journal")
    budget.add_argument("budget_file")
    budget.add_argument("--period", required=True, help="2024, 2024-Q1 or 2024-03")

    accounts = commands.add_parser("accounts", help="every account, as a tree")
    accounts.add_argument("journal")
    return parser


def show_balance(journal: Journal, args: argparse.Namespace) -> str:
    """The balance report: one row per account (and currency), then the total."""
    rows = balances(journal, depth=args.depth, pattern=args.account)
    lines = []
    for row in rows:
        label = account_label(row.account, tree=not args.flat)
        for index, text in enumerate(amounts_text(row.sorted_amounts())):
            lines.append([label if index == 0 else "", text])
    totals = [amount for amount in total_balance(rows).values() if amount]
    for index, text in enumerate(amounts_text(totals)):
        lines.append(["total" if index == 0 else "", text])
    return table(lines, ["account", "balance"])


def show_register(journal: Journal, args: argparse.Namespace) -> str:
    """The register: date, description, account, amount, running total."""
    rows = [
        [f"{line.day}", line.description[:30], line.account, str(line.amount), str(line.running)]
        for line in register(journal, args.account)
    ]
    return table(rows, ["date", "description", "account", "amount", "total"])


def show_report(journal: Journal, args: argparse.Namespace) -> str:
    """Sums per period."""
    rows = [
        [period.label, str(amount)] for period, amount in periodic(journal, args.by, args.account)
    ]
    return table(rows, [args.by, "amount"])


def show_budget(journal: Journal, args: argparse.Namespace) -> str:
    """Spending against the budget, one row per budgeted account."""
    period = parse_period(args.period)
    budget = load_budget(args.budget_file, journal.default_currency)
    rows = [
        [
            line.account,
            str(line.budget),
            str(line.spent),
            str(line.left),
            percent(line.spent, line.budget) + (" over" if line.over else ""),
        ]
        for line in compare(journal, budget, period)
    ]
    return table(rows, ["account", "budget", "spent", "left", "used"])


def show_accounts(journal: Journal, _args: argparse.Namespace) -> str:
    """Every account as an indented tree."""
    return "\n".join(account_label(name, tree=True) for name in journal.accounts.walk())


COMMANDS = {
    "balance": show_balance,
    "register": show_register,
    "report": show_report,
    "budget": show_budget,
    "accounts": show_accounts,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; errors in the journal or budget are printed, not raised."""
    args = build_parser().parse_args(argv)
    try:
        journal = read_file(args.journal)
        print(COMMANDS[args.command](journal, args))
    except (JournalError, BudgetError, DateError) as exc:
        print(f"ledger: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
