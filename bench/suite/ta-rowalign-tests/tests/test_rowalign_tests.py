"""The agent's test/test_rowalign.py must pass on tabulate as is and fail on broken variants."""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

APP = pathlib.Path("/app") if pathlib.Path("/app/tabulate").is_dir() else pathlib.Path.cwd()
TEST_FILE = APP / "test" / "test_rowalign.py"

# Runs the unittest cases of the module, and also plain test_* functions (no fixtures).
RUNNER = r"""
import importlib, inspect, sys, unittest
mod = importlib.import_module("test_rowalign")
suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
for name, obj in sorted(vars(mod).items()):
    if name.startswith("test") and inspect.isfunction(obj) and obj.__module__ == mod.__name__:
        if not inspect.signature(obj).parameters:
            suite.addTest(unittest.FunctionTestCase(obj))
result = unittest.TextTestRunner(verbosity=2).run(suite)
print("TESTS RUN:", result.testsRun)
sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
"""

ORIGINAL_CENTER = """    elif row_alignment == "center":
        top_delta = delta_lines // 2
        bottom_delta = delta_lines - top_delta
        return top_delta * blank + text_lines + bottom_delta * blank
"""

MUTANTS = {
    # rowalign ignored altogether: always top
    "ignored": ('    if row_alignment == "bottom":', '    if False and row_alignment == "bottom":'),
    # bottom behaves like top
    "bottom_is_top": ('    if row_alignment == "bottom":', '    if row_alignment == "bottm":'),
    # center behaves like top
    "center_is_top": ('    elif row_alignment == "center":', '    elif row_alignment == "centre":'),
    # center behaves like bottom
    "center_is_bottom": (ORIGINAL_CENTER, """    elif row_alignment == "center":
        return blank * delta_lines + text_lines
"""),
}


PYTEST_STUB = """
import contextlib, unittest
def skip(msg="", **kw):
    raise unittest.SkipTest(msg)
@contextlib.contextmanager
def raises(exc, *a, **kw):
    try:
        yield
    except exc:
        return
    raise AssertionError("DID NOT RAISE %r" % (exc,))
class _Mark:
    def __getattr__(self, name):
        def deco(*a, **k):
            if len(a) == 1 and callable(a[0]) and not k:
                return a[0]
            return lambda f: f
        return deco
mark = _Mark()
"""


def pytest_stub_path():
    """A directory with a minimal pytest stand-in when pytest is not installed (it is not in the image)."""
    import importlib.util
    import tempfile
    if importlib.util.find_spec("pytest") is not None:
        return ""
    d = tempfile.mkdtemp(prefix="pytest-stub-")
    with open(os.path.join(d, "pytest.py"), "w") as f:
        f.write(PYTEST_STUB)
    return d


def run_tests_on(app_dir):
    test_dir = pathlib.Path(app_dir) / "test"
    env = {"PYTHONPATH": f"{test_dir}:{app_dir}:{pytest_stub_path()}", "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-c", RUNNER], cwd=test_dir, env=env,
                          capture_output=True, text=True, timeout=60)


PRISTINE = pathlib.Path(__file__).resolve().parent / "pristine" / "tabulate"


def copy_app(dst):
    # the agent's tests run against tabulate as shipped with the task (and mutants of it),
    # not against whatever the agent may have changed in /app/tabulate
    shutil.copytree(PRISTINE, pathlib.Path(dst) / "tabulate")
    shutil.copytree(APP / "test", pathlib.Path(dst) / "test")
    return pathlib.Path(dst)


class RowalignTestsTest(unittest.TestCase):
    def test_file_exists(self):
        self.assertTrue(TEST_FILE.is_file(), f"{TEST_FILE} is missing")

    def test_passes_on_good_code(self):
        with tempfile.TemporaryDirectory() as d:
            p = run_tests_on(copy_app(d))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            ran = int(p.stdout.rsplit("TESTS RUN:", 1)[1].split()[0])
            self.assertGreaterEqual(ran, 2, p.stdout + p.stderr)

    def test_fails_on_each_mutant(self):
        for name, (old, new) in MUTANTS.items():
            with self.subTest(mutant=name), tempfile.TemporaryDirectory() as d:
                app = copy_app(d)
                module = app / "tabulate" / "__init__.py"
                src = module.read_text()
                self.assertEqual(src.count(old), 1, "mutation point not found")
                module.write_text(src.replace(old, new))
                p = run_tests_on(app)
                self.assertNotEqual(p.returncode, 0, f"tests still pass with mutant {name}:\n{p.stdout}{p.stderr}")


if __name__ == "__main__":
    unittest.main()
