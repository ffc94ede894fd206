"""Reading a journal file: transactions (a date line, then indented postings), comments, and directives
(`include FILE`, `D CURRENCY` for the default currency)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ledger.accounts import AccountError, AccountTree, check_name
from ledger.currencies import DEFAULT_CURRENCY
from ledger.dates import DateError, parse_date
from ledger.money import Money, MoneyError
from ledger.transactions import Posting, Transaction, UnbalancedError

HEADER = re.compile(r"^(?P<date>\S+)\s+(?:(?P<status>[*!])\s+)?(?P<description>.*?)\s*$")
SPLIT = re.compile(r"\s{2,}|\t")  # an account and its amount are apart by 2+ spaces or a tab
COMMENT_MARKS = (";", "#")


class JournalError(ValueError):
    """A journal that cannot be read, with the file and line where it went wrong."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line = path, line


@dataclass
class Journal:
    """Every transaction of a journal (includes read in), in file order, and the accounts they use."""

    transactions: list[Transaction] = field(default_factory=list)
    accounts: AccountTree = field(default_factory=AccountTree)
    default_currency: str = DEFAULT_CURRENCY

    def sorted(self) -> list[Transaction]:
        """The transactions by date (file order within a day)."""
        return sorted(self.transactions, key=lambda transaction: transaction.day)


def strip_comment(text: str) -> tuple[str, str]:
    """(the text before a `;` comment, the comment) for a posting or header line."""
    body, _mark, comment = text.partition(";")
    return body.rstrip(), comment.strip()


def is_comment(line: str) -> bool:
    """Whether a line is a whole-line comment."""
    return line.lstrip().startswith(COMMENT_MARKS)


def parse_posting(text: str, default_currency: str) -> Posting:
    """One indented posting line: `account  amount ; comment` (the amount may be missing)."""
    body, comment = strip_comment(text.strip())
    fields = SPLIT.split(body, maxsplit=1)
    account = check_name(fields[0].strip())
    if len(fields) == 1 or not fields[1].strip():
        return Posting(account, None, comment)
    return Posting(account, Money.parse(fields[1], default_currency), comment)


def parse_header(text: str) -> Transaction:
    """A transaction's first line: `2024-01-31 * Description ; comment`."""
    body, comment = strip_comment(text)
    match = HEADER.match(body)
    if match is None:
        raise DateError(f"not a transaction line: {text!r}")
    return Transaction(
        day=parse_date(match["date"]),
        description=match["description"],
        status=match["status"] or "",
        comment=comment,
    )


def blocks(lines: Iterable[str]) -> Iterator[tuple[int, list[str]]]:
    """(first line number, lines) for each unindented line and the indented lines under it."""
    current: list[str] = []
    start = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\n")
        if not line.strip() or is_comment(line):
            continue
        if line[0].isspace():
            if not current:
                raise JournalError("", number, "an indented line outside a transaction")
            current.append(line)
            continue
        if current:
            yield start, current
        current, start = [line], number
    if current:
        yield start, current


def read_text(text: str, path: str = "<journal>", journal: Journal | None = None) -> Journal:
    """Parse journal text into `journal` (a new one by default) and return it."""
    journal = journal or Journal()
    for start, lines in blocks(text.splitlines()):
        head = lines[0]
        try:
            if head.startswith("include "):
                include = Path(path).parent / head.removeprefix("include ").strip()
                read_file(include, journal)
                continue
            if head.startswith("D "):
                journal.default_currency = head.removeprefix("D ").strip().upper()
                continue
            transaction = parse_header(head)
            transaction.line = start
            for offset, line in enumerate(lines[1:], start=1):
                try:
                    transaction.postings.append(parse_posting(line, journal.default_currency))
                except (MoneyError, AccountError) as exc:
                    raise JournalError(path, start + offset, str(exc)) from exc
            transaction.balance()
        except (DateError, UnbalancedError) as exc:
            raise JournalError(path, start, str(exc)) from exc
        journal.accounts.update(posting.account for posting in transaction.postings)
        journal.transactions.append(transaction)
    return journal


def read_file(path: Path | str, journal: Journal | None = None) -> Journal:
    """Parse a journal file (and the files it includes)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise JournalError(str(path), 0, f"cannot read: {exc.strerror}") from exc
    return read_text(text, str(path), journal)
