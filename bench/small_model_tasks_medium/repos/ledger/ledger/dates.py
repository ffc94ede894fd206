"""Dates as journals write them, and the periods reports group them by (month, quarter, year)."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

DATE = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$")
PERIODS = ("month", "quarter", "year")


class DateError(ValueError):
    """A date or period that cannot be read."""


def parse_date(text: str) -> date:
    """A journal date: `2024-01-31`, `2024/1/31` or `2024.01.31`."""
    match = DATE.match(text.strip())
    if match is None:
        raise DateError(f"not a date: {text!r} (write YYYY-MM-DD)")
    year, month, day = (int(part) for part in match.groups())
    try:
        return date(year, month, day)
    except ValueError as exc:
        raise DateError(f"not a date: {text!r} ({exc})") from exc


def quarter(day: date) -> int:
    """The quarter of the year `day` falls in, 1 to 4."""
    return (day.month - 1) // 3 + 1


def month_end(year: int, month: int) -> date:
    """The last day of a month."""
    return date(year, month, calendar.monthrange(year, month)[1])


@dataclass(frozen=True, order=True)
class Period:
    """A span of days, first and last included, with the label reports print for it."""

    first: date
    last: date
    label: str

    def __contains__(self, day: object) -> bool:
        return isinstance(day, date) and self.first <= day <= self.last

    def days(self) -> int:
        """How many days the period has."""
        return (self.last - self.first).days + 1


def period_of(day: date, by: str) -> Period:
    """The month, quarter or year that contains `day`."""
    if by == "month":
        return Period(date(day.year, day.month, 1), month_end(day.year, day.month), f"{day:%Y-%m}")
    if by == "quarter":
        number = quarter(day)
        first_month = 3 * (number - 1) + 1
        return Period(
            date(day.year, first_month, 1),
            month_end(day.year, first_month + 2),
            f"{day.year}-Q{number}",
        )
    if by == "year":
        return Period(date(day.year, 1, 1), date(day.year, 12, 31), str(day.year))
    raise DateError(f"unknown period {by!r}; choose from {', '.join(PERIODS)}")


def parse_period(text: str) -> Period:
    """A period as the command line gives it: `2024`, `2024-03`, `2024-Q2`."""
    text = text.strip()
    if re.fullmatch(r"\d{4}", text):
        return period_of(date(int(text), 1, 1), "year")
    if match := re.fullmatch(r"(\d{4})-[Qq]([1-4])", text):
        return period_of(date(int(match[1]), 3 * int(match[2]) - 2, 1), "quarter")
    if match := re.fullmatch(r"(\d{4})-(\d{1,2})", text):
        month = int(match[2])
        if not 1 <= month <= 12:
            raise DateError(f"no month {month} in {text!r}")
        return period_of(date(int(match[1]), month, 1), "month")
    raise DateError(f"not a period: {text!r} (write 2024, 2024-03 or 2024-Q2)")


def periods_between(first: date, last: date, by: str) -> list[Period]:
    """Every period from the one holding `first` to the one holding `last`, in order."""
    periods: list[Period] = []
    day = first
    while day <= last:
        period = period_of(day, by)
        periods.append(period)
        day = period.last + timedelta(days=1)
    return periods
