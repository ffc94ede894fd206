import doctest
import sys
import unittest

sys.path.insert(0, "/app/src")

README = "/app/README.rst"


class ReadmeDoctestTest(unittest.TestCase):
    def setUp(self):
        with open(README, encoding="utf-8") as f:
            self.text = f.read()
        self.examples = doctest.DocTestParser().get_examples(self.text)
        self.source = "\n".join(e.source for e in self.examples)

    def test_examples_pass(self):
        result = doctest.testfile(README, module_relative=False, report=True, verbose=False)
        self.assertEqual(result.failed, 0, "README doctests fail")
        self.assertGreaterEqual(result.attempted, 8, "too few examples in README")

    def test_covers_parsing(self):
        for name in ("parse_date", "parse_time", "parse_datetime", "parse_duration"):
            with self.subTest(name=name):
                self.assertIn(name + "(", self.source)

    def test_covers_formatting(self):
        self.assertIn("duration_isoformat(", self.source)
        others = [n for n in ("date_isoformat(", "datetime_isoformat(", "time_isoformat(", "strftime(") if n in self.source]
        self.assertTrue(others, "no date/time formatting example")

    def test_examples_check_output(self):
        with_output = [e for e in self.examples if e.want.strip()]
        self.assertGreaterEqual(len(with_output), 6, "examples should show their results")

    def test_has_usage_heading(self):
        self.assertRegex(self.text, r"(?im)^(usage|examples?|quick ?start)[^\n]*\n[-=~^]{3,}")


if __name__ == "__main__":
    unittest.main()
