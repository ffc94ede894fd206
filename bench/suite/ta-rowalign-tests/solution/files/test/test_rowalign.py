"""Vertical alignment of multiline rows: the ``rowalign`` argument."""

import unittest

from tabulate import tabulate


def _lines(table, **kwargs):
    return tabulate(table, tablefmt="grid", **kwargs).splitlines()


class RowAlignTest(unittest.TestCase):
    table = [["one\ntwo\nthree", "x"]]

    def test_default_is_top(self):
        self.assertEqual(
            _lines(self.table),
            [
                "+-------+---+",
                "| one   | x |",
                "| two   |   |",
                "| three |   |",
                "+-------+---+",
            ],
        )

    def test_top(self):
        self.assertEqual(_lines(self.table, rowalign="top"), _lines(self.table))

    def test_center(self):
        self.assertEqual(
            _lines(self.table, rowalign="center"),
            [
                "+-------+---+",
                "| one   |   |",
                "| two   | x |",
                "| three |   |",
                "+-------+---+",
            ],
        )

    def test_center_odd_gap_puts_extra_line_below(self):
        table = [["a\nb\nc\nd", "x\ny"]]
        self.assertEqual(
            [ln[-5:] for ln in _lines(table, rowalign="center")[1:-1]],
            ["|   |", "| x |", "| y |", "|   |"],
        )
        table = [["a\nb", "x"]]
        self.assertEqual(
            [ln[-5:] for ln in _lines(table, rowalign="center")[1:-1]],
            ["| x |", "|   |"],
        )

    def test_bottom(self):
        self.assertEqual(
            _lines(self.table, rowalign="bottom"),
            [
                "+-------+---+",
                "| one   |   |",
                "| two   |   |",
                "| three | x |",
                "+-------+---+",
            ],
        )

    def test_per_row_list(self):
        table = [["a\nb\nc", "x"], ["d\ne\nf", "y"], ["g\nh\ni", "z"]]
        lines = _lines(table, rowalign=["bottom", "center", "top"])
        cells = [ln[-5:] for ln in lines if ln.startswith("|")]
        self.assertEqual(
            cells,
            ["|   |", "|   |", "| x |"]
            + ["|   |", "| y |", "|   |"]
            + ["| z |", "|   |", "|   |"],
        )

    def test_short_list_leaves_remaining_rows_top(self):
        table = [["a\nb", "x"], ["c\nd", "y"]]
        cells = [ln[-5:] for ln in _lines(table, rowalign=["bottom"]) if ln.startswith("|")]
        self.assertEqual(cells, ["|   |", "| x |", "| y |", "|   |"])

    def test_single_line_rows_unaffected(self):
        table = [["a", "b"], ["c", "d"]]
        for align in ("top", "center", "bottom"):
            self.assertEqual(_lines(table, rowalign=align), _lines(table))


if __name__ == "__main__":
    unittest.main()
