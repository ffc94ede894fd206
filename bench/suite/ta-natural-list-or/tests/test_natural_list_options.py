import doctest
import pathlib
import sys
import unittest

APP = pathlib.Path("/app") if pathlib.Path("/app/src/humanize").is_dir() else pathlib.Path.cwd()
sys.path.insert(0, str(APP / "src"))

import humanize  # noqa: E402
from humanize import natural_list  # noqa: E402


class NaturalListOptionsTest(unittest.TestCase):
    def test_defaults_unchanged(self):
        self.assertEqual(natural_list(["one", "two", "three"]), "one, two and three")
        self.assertEqual(natural_list(["one", "two"]), "one and two")
        self.assertEqual(natural_list(["one"]), "one")
        self.assertEqual(natural_list([]), "")
        self.assertEqual(natural_list(range(1, 4)), "1, 2 and 3")
        self.assertEqual(natural_list(x for x in "abc"), "a, b and c")

    def test_conjunction(self):
        self.assertEqual(natural_list(["tea", "coffee", "water"], conjunction="or"), "tea, coffee or water")
        self.assertEqual(natural_list(["tea", "coffee"], conjunction="or"), "tea or coffee")
        self.assertEqual(natural_list(["tea"], conjunction="or"), "tea")
        self.assertEqual(natural_list([], conjunction="or"), "")
        self.assertEqual(natural_list([1, 2, 3], conjunction="und"), "1, 2 und 3")

    def test_oxford_comma(self):
        self.assertEqual(natural_list(["a", "b", "c"], oxford_comma=True), "a, b, and c")
        self.assertEqual(natural_list(["a", "b", "c", "d"], oxford_comma=True), "a, b, c, and d")
        self.assertEqual(natural_list(["a", "b"], oxford_comma=True), "a and b")
        self.assertEqual(natural_list(["a"], oxford_comma=True), "a")
        self.assertEqual(natural_list(["a", "b", "c"], oxford_comma=False), "a, b and c")

    def test_both(self):
        self.assertEqual(natural_list((x for x in [1, 2, 3]), conjunction="or", oxford_comma=True), "1, 2, or 3")

    def test_documented(self):
        doc = natural_list.__doc__
        self.assertIn("conjunction", doc)
        self.assertIn("oxford_comma", doc)
        import humanize.lists
        result = doctest.testmod(humanize.lists, verbose=False)
        self.assertEqual(result.failed, 0)


if __name__ == "__main__":
    unittest.main()
