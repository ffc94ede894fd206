import math
import pathlib
import sys
import unittest

APP = pathlib.Path("/app") if pathlib.Path("/app/src/humanize").is_dir() else pathlib.Path.cwd()
sys.path.insert(0, str(APP / "src"))

import humanize  # noqa: E402


class OrdinalNegativeTest(unittest.TestCase):
    def tearDown(self):
        humanize.deactivate()

    def test_negative_suffixes(self):
        cases = {-1: "-1st", -2: "-2nd", -3: "-3rd", -4: "-4th", -9: "-9th", -10: "-10th",
                 -11: "-11th", -12: "-12th", -13: "-13th", -21: "-21st", -22: "-22nd",
                 -23: "-23rd", -101: "-101st", -111: "-111th", -112: "-112th", -1002: "-1002nd"}
        for value, expected in cases.items():
            self.assertEqual(humanize.ordinal(value), expected)
            self.assertEqual(humanize.ordinal(str(value)), expected)

    def test_negative_float(self):
        self.assertEqual(humanize.ordinal(-3.0), "-3rd")

    def test_positive_unchanged(self):
        cases = {0: "0th", 1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th",
                 13: "13th", 21: "21st", 101: "101st", 111: "111th", 1002: "1002nd"}
        for value, expected in cases.items():
            self.assertEqual(humanize.ordinal(value), expected)

    def test_non_numbers_unchanged(self):
        self.assertEqual(humanize.ordinal("something else"), "something else")
        self.assertEqual(humanize.ordinal(None), "None")
        self.assertEqual(humanize.ordinal(math.nan), "NaN")
        self.assertEqual(humanize.ordinal(-math.inf), "-Inf")

    def test_translated_negative(self):
        humanize.activate("fr_FR")
        self.assertEqual(humanize.ordinal(1), "1er")
        self.assertEqual(humanize.ordinal(-1), "-1er")
        self.assertEqual(humanize.ordinal(-1, gender="female"), "-1ère")
        self.assertEqual(humanize.ordinal(-2), "-2e")


if __name__ == "__main__":
    unittest.main()
