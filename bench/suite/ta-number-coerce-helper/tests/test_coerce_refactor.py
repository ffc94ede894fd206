import ast
import json
import pathlib
import subprocess
import sys
import unittest

APP = pathlib.Path("/app") if pathlib.Path("/app/src/humanize").is_dir() else pathlib.Path.cwd()
PRISTINE = pathlib.Path(__file__).resolve().parent / "pristine"
FUNCS = ["ordinal", "intword", "apnumber", "fractional", "scientific"]

# Evaluated in a subprocess against one copy of humanize; prints {case: repr(result) or exception name}.
PROBE = r'''
import json, math, sys
from decimal import Decimal
from fractions import Fraction
import humanize
inputs = [0, 1, 2, 3, 7, 9, 10, 11, 12, 13, 21, 22, 101, 111, -1, -7, -12, 1.0, 1.5, 2.7, -0.25,
          0.3333333, 1/3, 1e-9, 12345.678, 10**6, 1_234_567, 10**9 + 1, 10**30, 10**100, -10**12,
          "0", "7", "12", "-3", " 5 ", "1.5", "-2.75", "1e6", "1,000", "nan", "NaN", "inf", "-inf",
          "Infinity", "abc", "", None, [1, 2], {"a": 1}, True, False, b"7", math.nan, math.inf, -math.inf,
          Decimal("3"), Decimal("2.5"), Decimal("NaN"), Fraction(7, 2), 10**400, object]
out = {}
for locale in (None, "fr_FR", "ru_RU"):
    if locale:
        humanize.activate(locale)
    for name in %r:
        fn = getattr(humanize, name)
        for i, value in enumerate(inputs):
            extra = [()]
            if name == "intword":
                extra += [("%%.3f",)]
            if name == "scientific":
                extra += [(0,), (4,)]
            if name == "ordinal":
                extra += [("female",)]
            for args in extra:
                key = f"{locale}|{name}|{i}|{args}"
                try:
                    res = fn(value, *args)
                    out[key] = repr(res) if value is not object else type(res).__name__
                except Exception as e:
                    out[key] = "raised " + type(e).__name__
    humanize.deactivate()
print(json.dumps(out))
''' % (FUNCS,)


def probe(src_dir):
    p = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60,
                       cwd=src_dir, env={"PYTHONPATH": str(src_dir), "PATH": "/usr/bin:/bin",
                                         "PYTHONDONTWRITEBYTECODE": "1"})
    if p.returncode != 0:
        raise AssertionError(p.stderr)
    return json.loads(p.stdout)


def function_defs():
    tree = ast.parse((APP / "src" / "humanize" / "number.py").read_text())
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def referenced_names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


class CoerceRefactorTest(unittest.TestCase):
    def test_behaviour_unchanged(self):
        want = probe(PRISTINE)
        got = probe(APP / "src")
        self.assertEqual(len(got), len(want))
        diffs = {k: (want[k], got.get(k)) for k in want if got.get(k) != want[k]}
        self.assertEqual(diffs, {})

    def test_no_copy_pasted_try_blocks(self):
        defs = function_defs()
        for name in FUNCS:
            fn = defs[name]
            self.assertFalse([n for n in ast.walk(fn) if isinstance(n, ast.Try)], f"{name} still has a try block")
            self.assertNotIn("isfinite", referenced_names(fn), f"{name} still calls isfinite")

    def test_one_shared_helper(self):
        defs = function_defs()
        tree_names = set(defs)
        # helpers may live in number.py or be imported into it
        tree = ast.parse((APP / "src" / "humanize" / "number.py").read_text())
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                tree_names |= {a.asname or a.name for a in node.names}
        shared = set.intersection(*(referenced_names(defs[n]) for n in FUNCS)) & tree_names
        shared -= set(FUNCS) | {"_", "P_", "N_", "NS_", "_ngettext", "_format_not_finite", "math"}
        self.assertTrue(shared, "no helper is used by all of " + ", ".join(FUNCS))

    def test_doctests_still_pass(self):
        import doctest
        sys.path.insert(0, str(APP / "src"))
        try:
            import humanize.number
            result = doctest.testmod(humanize.number, verbose=False)
        finally:
            sys.path.remove(str(APP / "src"))
        self.assertEqual(result.failed, 0)


if __name__ == "__main__":
    unittest.main()
