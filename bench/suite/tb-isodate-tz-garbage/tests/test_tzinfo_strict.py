import sys
import unittest
from datetime import datetime, time, timedelta

sys.path.insert(0, "/app/src")

from isodate import UTC, ISO8601Error, parse_datetime, parse_time, parse_tzinfo  # noqa: E402


class ParseTzinfoStrictTest(unittest.TestCase):
    def test_rejects_garbage(self):
        for s in ["+01:00x", "Z ", " Z", "+0100junk", "+1", "UTC", "+01:0", "Zulu", "-05:30:00", "+01:00Z", "abc"]:
            with self.subTest(s=s):
                with self.assertRaises(ISO8601Error):
                    parse_tzinfo(s)

    def test_valid(self):
        self.assertIs(parse_tzinfo("Z"), UTC)
        cases = {
            "+01:00": timedelta(hours=1),
            "+0100": timedelta(hours=1),
            "+01": timedelta(hours=1),
            "-05:30": timedelta(hours=-5, minutes=-30),
            "-0530": timedelta(hours=-5, minutes=-30),
            "+14": timedelta(hours=14),
        }
        for s, off in cases.items():
            with self.subTest(s=s):
                self.assertEqual(parse_tzinfo(s).utcoffset(None), off)

    def test_time_and_datetime_still_parse(self):
        t = parse_time("23:20:50+01:00")
        self.assertEqual(t.replace(tzinfo=None), time(23, 20, 50))
        self.assertEqual(t.utcoffset(), timedelta(hours=1))
        dt = parse_datetime("1985-04-12T10:15:30Z")
        self.assertEqual(dt.replace(tzinfo=None), datetime(1985, 4, 12, 10, 15, 30))
        self.assertEqual(dt.utcoffset(), timedelta(0))
        self.assertIsNone(parse_time("101530").tzinfo)
        with self.assertRaises(ISO8601Error):
            parse_time("10:15:30+01:00x")


if __name__ == "__main__":
    unittest.main()
