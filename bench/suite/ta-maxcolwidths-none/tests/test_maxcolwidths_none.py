import unittest

from tabulate import tabulate


class MaxColWidthsNoneTest(unittest.TestCase):
    def test_none_cells_do_not_crash(self):
        out = tabulate([[None, "x"], ["y", None]], maxcolwidths=10)
        self.assertIn("x", out)
        self.assertIn("y", out)

    def test_none_cells_render_as_missingval(self):
        table = [[None, "abc"], ["x", None], [1, 2.5]]
        for fmt in ("plain", "grid", "pipe"):
            expected = tabulate(table, headers=["h1", "h2"], tablefmt=fmt, missingval="N/A")
            got = tabulate(table, headers=["h1", "h2"], tablefmt=fmt, missingval="N/A", maxcolwidths=10)
            self.assertEqual(got, expected, fmt)

    def test_wrapping_still_applies_next_to_none(self):
        out = tabulate([[None, "aaa bbb ccc"]], tablefmt="plain", maxcolwidths=[None, 3], missingval="-")
        lines = [l.rstrip() for l in out.splitlines()]
        self.assertEqual(len(lines), 3, out)
        self.assertTrue(lines[0].startswith("-"), out)
        for word, line in zip(("aaa", "bbb", "ccc"), lines):
            self.assertTrue(line.endswith(word), out)

    def test_per_column_list_with_none(self):
        out = tabulate([["hello world", None]], tablefmt="plain", maxcolwidths=[5, 5])
        self.assertEqual([l.rstrip() for l in out.splitlines()], ["hello", "world"])

    def test_empty_table(self):
        self.assertEqual(tabulate([], maxcolwidths=5), tabulate([]))
        self.assertEqual(tabulate([], maxcolwidths=[5, 3]), tabulate([]))

    def test_empty_table_with_headers(self):
        self.assertEqual(
            tabulate([], headers=["a", "b"], maxcolwidths=5),
            tabulate([], headers=["a", "b"]),
        )


if __name__ == "__main__":
    unittest.main()
