import os
import pathlib
import subprocess
import sys
import tempfile
import tomllib
import unittest

APP = pathlib.Path("/app") if pathlib.Path("/app/tabulate").is_dir() else pathlib.Path.cwd()

ROWS = "Sun 696000 1.9891e9\nEarth 6371 5973.6\nMoon 1737 73.5\n"
WITH_HEADER = "Planet Radius Mass\n" + ROWS


def entry_point():
    with open(APP / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["scripts"]["tabulate"]


def run(args, stdin=""):
    mod, _, func = entry_point().partition(":")
    code = (
        "import sys, importlib; sys.argv[0] = 'tabulate'; "
        f"r = getattr(importlib.import_module({mod!r}), {func!r})(); "
        "sys.exit(r if isinstance(r, int) else 0)"
    )
    env = dict(os.environ, PYTHONPATH=str(APP))
    return subprocess.run(
        [sys.executable, "-c", code, *args], input=stdin, capture_output=True,
        text=True, cwd=APP, env=env, timeout=30,
    )


def lines(text):
    return [l.rstrip() for l in text.strip("\n").splitlines()]


def expected(rows, **kw):
    sys.path.insert(0, str(APP))
    import re
    from tabulate import tabulate
    table = [re.split(kw.pop("sep", r"\s+"), r.rstrip()) for r in rows.splitlines() if r.strip()]
    return lines(tabulate(table, **kw))


class CliArgparseTest(unittest.TestCase):
    def ok(self, args, stdin=""):
        p = run(args, stdin)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_no_getopt_left(self):
        src = "".join(p.read_text() for p in (APP / "tabulate").glob("*.py"))
        self.assertNotIn("getopt", src)
        self.assertIn("argparse", src)

    def test_default_stdin(self):
        out = self.ok([], ROWS)
        self.assertEqual(lines(out), lines("-----  ------  -------------\nSun    696000     1.9891e+09\nEarth    6371  5973.6\nMoon     1737    73.5\n-----  ------  -------------"))
        self.assertEqual(lines(self.ok(["-"], ROWS)), lines(out))

    def test_header_and_format(self):
        for args in (["-1", "-f", "grid"], ["--header", "--format", "grid"], ["--header", "--format=grid"]):
            out = self.ok(args, WITH_HEADER)
            self.assertEqual(lines(out), expected(WITH_HEADER, headers="firstrow", tablefmt="grid"), args)
            self.assertIn("| Planet", out)

    def test_int_option(self):
        for opt in ("-I", "--int"):
            out = self.ok([opt, ","], ROWS)
            self.assertIn("696,000", out, opt)
            self.assertIn("6,371", out, opt)

    def test_float_option(self):
        for opt in ("-F", "--float"):
            out = self.ok([opt, ".1f"], ROWS)
            self.assertIn("5973.6", out)
            self.assertIn("1989100000.0", out)

    def test_sep_option(self):
        data = "a,1\nb,22\n"
        for opt in ("-s", "--sep"):
            out = self.ok([opt, ",", "-f", "plain"], data)
            self.assertEqual(lines(out), ["a   1", "b  22"])

    def test_output_option(self):
        for opt in ("-o", "--output"):
            with tempfile.TemporaryDirectory() as d:
                src = os.path.join(d, "in.txt")
                dst = os.path.join(d, "out.txt")
                with open(src, "w") as f:
                    f.write(ROWS)
                out = self.ok([opt, dst, src])
                self.assertEqual(out.strip(), "")
                with open(dst) as f:
                    self.assertEqual(lines(f.read()), expected(ROWS))

    def test_several_files(self):
        with tempfile.TemporaryDirectory() as d:
            names = []
            for i, body in enumerate(("a 1\n", "b 2\n")):
                names.append(os.path.join(d, f"f{i}.txt"))
                with open(names[-1], "w") as f:
                    f.write(body)
            out = self.ok(["-f", "plain", *names])
            self.assertEqual(lines(out), ["a  1", "b  2"])

    def test_help(self):
        p = run(["-h"])
        self.assertEqual(p.returncode, 0)
        for opt in ("--header", "--output", "--sep", "--float", "--int", "--format"):
            self.assertIn(opt, p.stdout)

    def test_bad_format_and_bad_option(self):
        self.assertNotEqual(run(["-f", "no_such_format"], ROWS).returncode, 0)
        self.assertNotEqual(run(["--no-such-option"], ROWS).returncode, 0)


if __name__ == "__main__":
    unittest.main()
