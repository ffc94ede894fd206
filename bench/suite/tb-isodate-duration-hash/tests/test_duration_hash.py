import sys
import unittest
from datetime import timedelta
from decimal import Decimal

sys.path.insert(0, "/app/src")

from isodate import Duration, parse_duration  # noqa: E402


class DurationHashTest(unittest.TestCase):
    def test_year_vs_months(self):
        a, b = Duration(years=1), Duration(months=12)
        self.assertEqual(a, b)
        self.assertEqual(hash(a), hash(b))
        self.assertEqual(len({a, b}), 1)

    def test_dict_lookup(self):
        d = {Duration(years=2, days=3): "x"}
        self.assertEqual(d.get(Duration(months=24, days=3)), "x")
        self.assertIn(Duration(years=1, months=12, days=3), d)

    def test_mixed_signs(self):
        a, b = Duration(years=2, months=-12), Duration(months=12)
        self.assertEqual(a, b)
        self.assertEqual(hash(a), hash(b))

    def test_parsed(self):
        a, b = parse_duration("P1Y6M"), parse_duration("P18M")
        self.assertEqual(a, b)
        self.assertEqual(len({a, b}), 1)

    def test_decimal_months(self):
        a, b = Duration(years=Decimal("1")), Duration(months=Decimal("12"))
        self.assertEqual(hash(a), hash(b))

    def test_unequal_still_distinct(self):
        s = {Duration(years=1), Duration(years=1, days=1), Duration(months=13), Duration(10, 10, years=10)}
        self.assertEqual(len(s), 4)
        self.assertNotEqual(Duration(years=1), Duration(months=11))

    def test_hash_stable(self):
        self.assertEqual(hash(Duration(10, 10, years=10, months=10)), hash(Duration(10, 10, years=10, months=10)))


if __name__ == "__main__":
    unittest.main()
