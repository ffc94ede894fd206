import unittest

from tabulate import tabulate


class IntfmtStringsTest(unittest.TestCase):
    def test_ci_case(self):
        result = tabulate([[82642], ["1500"], [2463]], intfmt=",", tablefmt="plain")
        self.assertEqual(result, "82,642\n 1,500\n 2,463")

    def test_all_strings_with_headers(self):
        result = tabulate([["a", "1000"], ["b", "90000"]], headers=["k", "v"], intfmt=",")
        self.assertEqual(result, tabulate([["a", 1000], ["b", 90000]], headers=["k", "v"], intfmt=","))
        self.assertIn("90,000", result)

    def test_negative_string(self):
        result = tabulate([["-1500"], [20]], intfmt=",", tablefmt="plain")
        self.assertEqual([l.strip() for l in result.splitlines()], ["-1,500", "20"])

    def test_other_intfmt(self):
        result = tabulate([["42"], [7]], intfmt="05d", tablefmt="plain")
        self.assertEqual(result.splitlines(), ["00042", "00007"])

    def test_missing_values(self):
        result = tabulate([["1500"], [None], [2000]], intfmt=",", tablefmt="plain", missingval="?")
        self.assertEqual([l.strip() for l in result.splitlines()], ["1,500", "?", "2,000"])

    def test_plain_ints_unchanged(self):
        self.assertEqual(tabulate([[10000], [10]], intfmt=",", tablefmt="plain"), "10,000\n    10")

    def test_disable_numparse_keeps_text(self):
        result = tabulate([["1500"], ["20"]], intfmt=",", tablefmt="plain", disable_numparse=True)
        self.assertEqual([l.strip() for l in result.splitlines()], ["1500", "20"])


if __name__ == "__main__":
    unittest.main()
