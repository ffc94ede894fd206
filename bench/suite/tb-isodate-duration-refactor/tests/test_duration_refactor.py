import ast
import calendar
import glob
import sys
import unittest
from datetime import date, datetime, timedelta
from decimal import Decimal

sys.path.insert(0, "/app/src")

from isodate import Duration, parse_duration  # noqa: E402


def ref_shift(d, years, months):
    m = d.month - 1 + months
    y = d.year + years + m // 12
    m = m % 12 + 1
    return d.replace(year=y, month=m, day=min(d.day, calendar.monthrange(y, m)[1]))


DATES = [
    date(2023, 1, 31), date(2024, 1, 31), date(2024, 2, 29), date(2023, 3, 31), date(2023, 12, 31),
    date(1900, 1, 31), date(2000, 3, 31), date(2023, 6, 15), date(2023, 11, 30), date(2024, 8, 31),
]
DATETIMES = [datetime(2023, 1, 31, 22, 30), datetime(2024, 2, 29, 0, 0, 1), datetime(2023, 12, 31, 23, 59, 59)]
YEARS = [-2, -1, 0, 1, 3]
MONTHS = [-25, -13, -12, -1, 0, 1, 2, 11, 12, 13, 25]
TDS = [timedelta(0), timedelta(days=1), timedelta(hours=36), timedelta(seconds=-5)]


class BehaviourTest(unittest.TestCase):
    def test_add_grid(self):
        for d in DATES + DATETIMES:
            for y in YEARS:
                for m in MONTHS:
                    for td in TDS:
                        dur = Duration(years=y, months=m) + td
                        exp = ref_shift(d, y, m) + td
                        with self.subTest(d=d, y=y, m=m, td=td):
                            self.assertEqual(d + dur, exp)
                            self.assertEqual(dur + d, exp)

    def test_sub_grid(self):
        for d in DATES + DATETIMES:
            for y in YEARS:
                for m in MONTHS:
                    for td in TDS:
                        dur = Duration(years=y, months=m) + td
                        exp = ref_shift(d, -y, -m) - td
                        with self.subTest(d=d, y=y, m=m, td=td):
                            self.assertEqual(d - dur, exp)

    def test_decimal_integral_values(self):
        dur = Duration(years=Decimal("1"), months=Decimal("1.0"))
        self.assertEqual(date(2023, 1, 31) + dur, date(2024, 2, 29))
        self.assertEqual(date(2023, 3, 31) - dur, date(2022, 2, 28))
        self.assertEqual(date(2023, 1, 31) + parse_duration("P1Y1M"), date(2024, 2, 29))

    def test_fractional_rejected_with_dates(self):
        for dur in (Duration(years=1.5), Duration(months=Decimal("0.5"))):
            with self.subTest(dur=dur):
                with self.assertRaises(ValueError):
                    date(2023, 1, 1) + dur
                with self.assertRaises(ValueError):
                    dur + datetime(2023, 1, 1)
                with self.assertRaises(ValueError):
                    date(2023, 1, 1) - dur

    def test_duration_and_timedelta_math(self):
        a = Duration(days=1, years=1, months=2)
        self.assertEqual(a + Duration(months=10), Duration(days=1, years=2))
        self.assertEqual(a - Duration(months=2), Duration(days=1, years=1))
        self.assertEqual(a + timedelta(days=2), Duration(days=3, years=1, months=2))
        self.assertEqual(timedelta(days=2) + a, Duration(days=3, years=1, months=2))
        self.assertEqual(a - timedelta(days=1), Duration(years=1, months=2))
        self.assertEqual(timedelta(days=1) - a, Duration(years=-1, months=-2))
        self.assertEqual(a * 2, Duration(days=2, years=2, months=4))

    def test_unsupported_types(self):
        with self.assertRaises(TypeError):
            Duration(months=1) + "x"
        with self.assertRaises(TypeError):
            "x" - Duration(months=1)
        with self.assertRaises(TypeError):
            5 - Duration(months=1)


class StructureTest(unittest.TestCase):
    def _calls(self, name):
        n = 0
        for path in glob.glob("/app/src/isodate/*.py"):
            with open(path) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    fn = node.func
                    called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else None
                    if called == name:
                        n += 1
        return n

    def test_month_end_clamping_in_one_place(self):
        self.assertLessEqual(self._calls("max_days_in_month"), 1)

    def test_month_carry_in_one_place(self):
        self.assertLessEqual(self._calls("fquotmod"), 1)

    def test_fractional_check_in_one_place(self):
        with open("/app/src/isodate/duration.py") as f:
            src = f.read()
        self.assertLessEqual(src.count("is_integer()"), 2)


if __name__ == "__main__":
    unittest.main()
