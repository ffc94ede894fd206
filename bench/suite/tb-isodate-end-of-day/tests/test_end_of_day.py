import sys
import unittest
from datetime import datetime, timedelta

sys.path.insert(0, "/app/src")

from isodate import parse_datetime, parse_time  # noqa: E402


class EndOfDayTest(unittest.TestCase):
    def test_extended(self):
        self.assertEqual(parse_datetime("2024-03-31T24:00"), datetime(2024, 4, 1, 0, 0))
        self.assertEqual(parse_datetime("2024-03-31T24:00:00"), datetime(2024, 4, 1, 0, 0))
        self.assertEqual(parse_datetime("2024-03-31T24:00:00.000"), datetime(2024, 4, 1, 0, 0))

    def test_basic_and_hour_only(self):
        self.assertEqual(parse_datetime("20240228T2400"), datetime(2024, 2, 29))
        self.assertEqual(parse_datetime("20240228T240000"), datetime(2024, 2, 29))
        self.assertEqual(parse_datetime("2023-02-28T24"), datetime(2023, 3, 1))

    def test_year_rollover(self):
        self.assertEqual(parse_datetime("2024-12-31T24:00:00"), datetime(2025, 1, 1))

    def test_keeps_tz(self):
        r = parse_datetime("2024-12-31T24:00:00Z")
        self.assertEqual(r.replace(tzinfo=None), datetime(2025, 1, 1))
        self.assertEqual(r.utcoffset(), timedelta(0))
        r = parse_datetime("2024-03-31T24:00+02:00")
        self.assertEqual(r.replace(tzinfo=None), datetime(2024, 4, 1))
        self.assertEqual(r.utcoffset(), timedelta(hours=2))
        r = parse_datetime("20240331T2400-0530")
        self.assertEqual(r.replace(tzinfo=None), datetime(2024, 4, 1))
        self.assertEqual(r.utcoffset(), timedelta(hours=-5, minutes=-30))

    def test_other_hour_24_rejected(self):
        for s in ["2024-03-31T24:00:01", "2024-03-31T24:30", "2024-03-31T24:00:00.5", "2024-03-31T25:00"]:
            with self.subTest(s=s):
                with self.assertRaises(ValueError):
                    parse_datetime(s)

    def test_normal_times_unchanged(self):
        self.assertEqual(parse_datetime("2024-03-31T23:59:59.999999"), datetime(2024, 3, 31, 23, 59, 59, 999999))
        self.assertEqual(parse_datetime("2024-03-31T00:00"), datetime(2024, 3, 31, 0, 0))
        self.assertEqual(parse_datetime("20240331T1230.5"), datetime(2024, 3, 31, 12, 30, 30))
        self.assertEqual(parse_time("10.5").minute, 30)
        r = parse_datetime("1985-04-12T10:15:30+04:00")
        self.assertEqual(r.utcoffset(), timedelta(hours=4))


if __name__ == "__main__":
    unittest.main()
