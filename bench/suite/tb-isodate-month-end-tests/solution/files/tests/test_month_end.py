"""
Duration arithmetic with dates at the end of a month.

Plain unittest (no pytest needed): python -m unittest discover -s tests -p test_month_end.py
"""

import os
import sys
import unittest
from datetime import date, datetime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from isodate import Duration, parse_duration  # noqa: E402
from isodate.duration import max_days_in_month  # noqa: E402


class MaxDaysInMonthTest(unittest.TestCase):
    def test_long_and_short_months(self):
        for month in (1, 3, 5, 7, 8, 10, 12):
            self.assertEqual(max_days_in_month(2023, month), 31)
        for month in (4, 6, 9, 11):
            self.assertEqual(max_days_in_month(2023, month), 30)

    def test_february(self):
        self.assertEqual(max_days_in_month(2023, 2), 28)
        self.assertEqual(max_days_in_month(2024, 2), 29)
        self.assertEqual(max_days_in_month(2000, 2), 29)  # divisible by 400
        self.assertEqual(max_days_in_month(1900, 2), 28)  # century, not by 400
        self.assertEqual(max_days_in_month(2100, 2), 28)


class AddMonthsTest(unittest.TestCase):
    def test_clamps_to_month_end(self):
        self.assertEqual(date(2023, 1, 31) + Duration(months=1), date(2023, 2, 28))
        self.assertEqual(date(2023, 3, 31) + Duration(months=1), date(2023, 4, 30))
        self.assertEqual(Duration(months=1) + date(2023, 5, 31), date(2023, 6, 30))

    def test_leap_years(self):
        self.assertEqual(date(2024, 1, 31) + Duration(months=1), date(2024, 2, 29))
        self.assertEqual(date(2000, 1, 31) + Duration(months=1), date(2000, 2, 29))
        self.assertEqual(date(1900, 1, 31) + Duration(months=1), date(1900, 2, 28))
        self.assertEqual(date(2024, 2, 29) + Duration(years=1), date(2025, 2, 28))

    def test_year_boundary(self):
        self.assertEqual(date(2023, 12, 31) + Duration(months=1), date(2024, 1, 31))
        self.assertEqual(date(2023, 11, 30) + Duration(months=3), date(2024, 2, 29))
        self.assertEqual(date(2023, 12, 15) + Duration(months=14), date(2025, 2, 15))

    def test_datetime_keeps_time(self):
        self.assertEqual(
            datetime(2023, 1, 31, 10, 30) + parse_duration("P1M"),
            datetime(2023, 2, 28, 10, 30),
        )

    def test_no_clamp_needed(self):
        self.assertEqual(date(2023, 1, 15) + Duration(months=1), date(2023, 2, 15))


class SubtractMonthsTest(unittest.TestCase):
    def test_clamps_to_month_end(self):
        self.assertEqual(date(2023, 3, 31) - Duration(months=1), date(2023, 2, 28))
        self.assertEqual(date(2023, 5, 31) - Duration(months=1), date(2023, 4, 30))

    def test_leap_years(self):
        self.assertEqual(date(2024, 3, 31) - Duration(months=1), date(2024, 2, 29))
        self.assertEqual(date(2000, 3, 31) - Duration(months=1), date(2000, 2, 29))
        self.assertEqual(date(1900, 3, 31) - Duration(months=1), date(1900, 2, 28))
        self.assertEqual(date(2024, 2, 29) - Duration(years=1), date(2023, 2, 28))

    def test_year_boundary(self):
        self.assertEqual(date(2024, 1, 31) - Duration(months=1), date(2023, 12, 31))
        self.assertEqual(date(2024, 3, 31) - Duration(months=13), date(2023, 2, 28))

    def test_with_days(self):
        self.assertEqual(date(2023, 3, 31) - Duration(days=1, months=1), date(2023, 2, 27))


if __name__ == "__main__":
    unittest.main()
