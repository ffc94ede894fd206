"""tests/test_filesize.py must run under plain unittest (no pytest) and still catch what the pytest version caught."""

import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

APP = pathlib.Path("/app") if pathlib.Path("/app/src/humanize").is_dir() else pathlib.Path.cwd()
TEST_FILE = APP / "tests" / "test_filesize.py"
PRISTINE = pathlib.Path(__file__).resolve().parent / "pristine" / "humanize"

# pytest is made unimportable; unittest cases and plain test_* functions without arguments run
RUNNER = r"""
import importlib, inspect, sys, unittest
sys.modules["pytest"] = None
mod = importlib.import_module("test_filesize")
suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
for name, obj in sorted(vars(mod).items()):
    if name.startswith("test") and inspect.isfunction(obj) and obj.__module__ == mod.__name__:
        if not inspect.signature(obj).parameters:
            suite.addTest(unittest.FunctionTestCase(obj))
result = unittest.TextTestRunner(verbosity=2).run(suite)
print("TESTS RUN:", result.testsRun)
sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
"""

MUTANTS = {
    "no_rounding_carry": ("        exp += 1\n", "        exp += 0\n"),
    "drops_sign": ("    bytes_ = float(value)\n", "    bytes_ = abs(float(value))\n"),
    "gnu_bytes_spaced": ('f"{int(bytes_)}B"', 'f"{int(bytes_)} B"'),
    "minus_one_plural": ("    if abs_bytes == 1 and not gnu:", "    if bytes_ == 1 and not gnu:"),
    "format_ignored": ('    ret: str = format % (bytes_', '    ret: str = "%.1f" % (bytes_'),
    "binary_ignored": ("    elif binary:\n", "    elif False:\n"),
}


def run_on(filesize_source=None):
    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        shutil.copytree(PRISTINE, d / "src" / "humanize")
        if filesize_source is not None:
            (d / "src" / "humanize" / "filesize.py").write_text(filesize_source)
        (d / "t").mkdir()
        shutil.copy(TEST_FILE, d / "t" / "test_filesize.py")
        env = {"PYTHONPATH": f"{d / 't'}:{d / 'src'}", "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.run([sys.executable, "-c", RUNNER], cwd=d / "t", env=env,
                              capture_output=True, text=True, timeout=60)


class FilesizePortTest(unittest.TestCase):
    def test_no_pytest_left(self):
        src = TEST_FILE.read_text()
        self.assertIsNone(re.search(r"^\s*(import|from)\s+pytest\b", src, re.M))
        self.assertNotIn("@pytest", src)

    def test_passes_without_pytest(self):
        p = run_on()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_catches_mutants(self):
        original = (PRISTINE / "filesize.py").read_text()
        for name, (old, new) in MUTANTS.items():
            with self.subTest(mutant=name):
                self.assertEqual(original.count(old), 1)
                p = run_on(original.replace(old, new))
                self.assertNotEqual(p.returncode, 0, f"mutant {name} not caught:\n{p.stdout}{p.stderr}")


if __name__ == "__main__":
    unittest.main()
