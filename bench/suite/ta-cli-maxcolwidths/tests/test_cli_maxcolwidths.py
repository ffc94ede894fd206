import os
import pathlib
import re
import subprocess
import sys
import tomllib
import unittest

APP = pathlib.Path("/app") if pathlib.Path("/app/tabulate").is_dir() else pathlib.Path.cwd()
sys.path.insert(0, str(APP))

DATA = "name,description,qty\napple,a round fruit from a tree,3\nkiwi,small and green,12\n"


def run(args, stdin=DATA):
    with open(APP / "pyproject.toml", "rb") as f:
        mod, _, func = tomllib.load(f)["project"]["scripts"]["tabulate"].partition(":")
    code = (
        "import sys, importlib; sys.argv[0] = 'tabulate'; "
        f"r = getattr(importlib.import_module({mod!r}), {func!r})(); "
        "sys.exit(r if isinstance(r, int) else 0)"
    )
    env = dict(os.environ, PYTHONPATH=str(APP))
    return subprocess.run([sys.executable, "-c", code, *args], input=stdin,
                          capture_output=True, text=True, cwd=APP, env=env, timeout=30)


def lines(text):
    return [l.rstrip() for l in text.strip("\n").splitlines()]


def library(**kw):
    from tabulate import tabulate
    table = [re.split(",", r) for r in DATA.splitlines() if r.strip()]
    return lines(tabulate(table, **kw))


class CliMaxcolwidthsTest(unittest.TestCase):
    def ok(self, args):
        p = run(args)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return lines(p.stdout)

    def test_single_width(self):
        out = self.ok(["-s", ",", "-1", "--maxcolwidths", "6"])
        self.assertEqual(out, library(headers="firstrow", maxcolwidths=6))
        self.assertTrue(all(len(l) < 30 for l in out), out)

    def test_equals_syntax(self):
        out = self.ok(["-s", ",", "-f", "grid", "--maxcolwidths=8"])
        self.assertEqual(out, library(tablefmt="grid", maxcolwidths=8))

    def test_per_column_list(self):
        out = self.ok(["-s", ",", "-1", "-f", "plain", "--maxcolwidths", "30,5"])
        self.assertEqual(out, library(headers="firstrow", tablefmt="plain", maxcolwidths=[30, 5]))
        self.assertIn("apple", "\n".join(out))
        self.assertNotIn("a round fruit", "\n".join(out))

    def test_per_column_list_three(self):
        out = self.ok(["-s", ",", "--maxcolwidths", "3,10,2"])
        self.assertEqual(out, library(maxcolwidths=[3, 10, 2]))

    def test_without_option_unchanged(self):
        self.assertEqual(self.ok(["-s", ","]), library())


if __name__ == "__main__":
    unittest.main()
