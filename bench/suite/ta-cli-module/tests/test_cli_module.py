import os
import pathlib
import subprocess
import sys
import tomllib
import unittest

APP = pathlib.Path("/app") if pathlib.Path("/app/tabulate").is_dir() else pathlib.Path.cwd()
ROWS = "Planet Radius\nSun 696000\nMoon 1737\n"

RUNNER = r"""
import importlib, inspect, sys, unittest
mod = importlib.import_module("test_cli")
suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
for name, obj in sorted(vars(mod).items()):
    if name.startswith("test") and inspect.isfunction(obj) and obj.__module__ == mod.__name__:
        if not inspect.signature(obj).parameters:
            suite.addTest(unittest.FunctionTestCase(obj))
result = unittest.TextTestRunner(verbosity=2).run(suite)
sys.exit(0 if result.wasSuccessful() and result.testsRun >= 7 else 1)
"""


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


def entry_point():
    with open(APP / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["scripts"]["tabulate"]


def run_script(args, stdin=ROWS):
    mod, _, func = entry_point().partition(":")
    code = (
        "import sys, importlib; sys.argv[0] = 'tabulate'; "
        f"r = getattr(importlib.import_module({mod!r}), {func!r})(); "
        "sys.exit(r if isinstance(r, int) else 0)"
    )
    env = dict(os.environ, PYTHONPATH=str(APP))
    return subprocess.run([sys.executable, "-c", code, *args], input=stdin,
                          capture_output=True, text=True, cwd=APP, env=env, timeout=30)


class CliModuleTest(unittest.TestCase):
    def test_cli_module_exists(self):
        self.assertTrue((APP / "tabulate" / "cli.py").is_file())

    def test_cli_code_left_init(self):
        src = (APP / "tabulate" / "__init__.py").read_text()
        self.assertNotIn("getopt", src)
        self.assertNotIn("def _main(", src)
        self.assertNotIn("def _pprint_file(", src)
        self.assertNotIn("Usage: tabulate", src)

    def test_entry_point_in_cli_module(self):
        self.assertTrue(entry_point().split(":")[0].startswith("tabulate.cli"), entry_point())

    def test_console_script_runs(self):
        p = run_script(["-1", "-f", "grid"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| Planet   |   Radius |", p.stdout)
        self.assertIn("| Sun      |   696000 |", p.stdout)

    def test_console_script_options(self):
        p = run_script(["-s", ",", "-F", ".1f", "-f", "plain"], "a,1.25\nb,2\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([l.rstrip() for l in p.stdout.strip().splitlines()], ["a  1.2", "b  2.0"])
        p = run_script(["-f", "no_such_format"])
        self.assertNotEqual(p.returncode, 0)
        p = run_script(["-h"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("--format", p.stdout)

    def test_output_file(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.txt")
            p = run_script(["-o", out, "-f", "plain"], "x 1\n")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                self.assertEqual(f.read().strip(), "x  1")

    def test_project_cli_tests_pass(self):
        test_dir = APP / "test"
        env = dict(os.environ, PYTHONPATH=f"{test_dir}:{APP}:{pytest_stub_path()}")
        p = subprocess.run([sys.executable, "-c", RUNNER], cwd=APP, env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_library_api_unchanged(self):
        import tabulate
        self.assertEqual(sorted(tabulate.__all__), ["simple_separated_format", "tabulate", "tabulate_formats"])
        self.assertEqual(tabulate.tabulate([["a", 1]], tablefmt="plain"), "a  1")


if __name__ == "__main__":
    unittest.main()
