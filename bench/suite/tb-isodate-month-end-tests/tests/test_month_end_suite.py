"""Checks the agent's tests/test_month_end.py: it must pass on the real code
and fail on each known-bad variant of isodate/duration.py."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

APP = "/app"
TEST_FILE = os.path.join(APP, "tests", "test_month_end.py")

ADD_CLAMP = """            newdt = other.replace(
                year=int(newyear), month=int(newmonth), day=int(newday)
            )
            # does a timedelta + date/datetime"""

MUTANTS = {
    "add_no_clamp": (ADD_CLAMP, ADD_CLAMP.replace("day=int(newday)", "day=int(other.day)")),
    "sub_no_clamp": (
        "            return newdt - self.tdelta",
        "            newdt = other.replace(year=int(newyear), month=int(newmonth))\n            return newdt - self.tdelta",
    ),
    "feb_always_28": (
        "    if ((year % 400) == 0) or ((year % 100) != 0) and ((year % 4) == 0):\n        return 29",
        "    if False:\n        return 29",
    ),
    "century_rule": (
        "    if ((year % 400) == 0) or ((year % 100) != 0) and ((year % 4) == 0):",
        "    if (year % 4) == 0:",
    ),
    "no_year_carry": (
        "            newyear = other.year + self.years + carry",
        "            newyear = other.year + self.years",
    ),
}


def run_suite(src_dir):
    """Copy the project with the given isodate package and run the agent's test file."""
    tmp = tempfile.mkdtemp()
    try:
        root = os.path.join(tmp, "proj")
        shutil.copytree(os.path.join(APP, "tests"), os.path.join(root, "tests"), ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(src_dir, os.path.join(root, "src"), ignore=shutil.ignore_patterns("__pycache__"))
        env = dict(os.environ, PYTHONPATH=os.path.join(root, "src"), PYTHONDONTWRITEBYTECODE="1")
        proc = subprocess.run(
            [sys.executable, "-m", "unittest", "discover", "-s", "tests", "-t", "tests", "-p", "test_month_end.py", "-v"],
            cwd=root, env=env, capture_output=True, text=True, timeout=60,
        )
        out = proc.stdout + proc.stderr
        m = re.search(r"^Ran (\d+) tests?", out, re.M)
        return proc.returncode, int(m.group(1)) if m else 0, out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class MonthEndSuiteTest(unittest.TestCase):
    def test_file_exists_and_no_pytest(self):
        self.assertTrue(os.path.exists(TEST_FILE), "tests/test_month_end.py missing")
        with open(TEST_FILE) as f:
            src = f.read()
        self.assertNotRegex(src, r"(?m)^\s*(import pytest|from pytest)")

    def test_passes_on_real_code(self):
        self.assertTrue(os.path.exists(TEST_FILE))
        rc, ran, out = run_suite(os.path.join(APP, "src"))
        self.assertEqual(rc, 0, out)
        self.assertGreaterEqual(ran, 3, out)

    def test_fails_on_mutants(self):
        self.assertTrue(os.path.exists(TEST_FILE))
        for name, (old, new) in MUTANTS.items():
            with self.subTest(mutant=name):
                tmp = tempfile.mkdtemp()
                try:
                    src = os.path.join(tmp, "src")
                    shutil.copytree(os.path.join(APP, "src"), src, ignore=shutil.ignore_patterns("__pycache__"))
                    path = os.path.join(src, "isodate", "duration.py")
                    with open(path) as f:
                        code = f.read()
                    self.assertIn(old, code, "duration.py changed unexpectedly; cannot mutate")
                    with open(path, "w") as f:
                        f.write(code.replace(old, new, 1))
                    rc, ran, out = run_suite(src)
                    self.assertNotEqual(rc, 0, "the tests still pass with mutant %s:\n%s" % (name, out))
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
