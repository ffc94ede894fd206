import doctest
import inspect
import pathlib
import re
import unittest

import tabulate as tabulate_module
from tabulate import tabulate

APP = pathlib.Path(tabulate_module.__file__).resolve().parent.parent
NAMES = ("colalign", "rowalign", "maxheadercolwidths")


def examples(text):
    return doctest.DocTestParser().get_examples(text)


def readme_text():
    lines = (APP / "README.md").read_text(encoding="utf-8").splitlines()
    # markdown code fences are not part of the expected output of an example
    return "\n".join(l for l in lines if not l.strip().startswith("```")) + "\n"


class DocstringTest(unittest.TestCase):
    def test_every_parameter_documented(self):
        doc = tabulate.__doc__
        missing = [p for p in inspect.signature(tabulate).parameters
                   if not re.search(r"\b%s\b" % p, doc)]
        self.assertEqual(missing, [])

    def test_docstring_examples_for_new_params(self):
        sources = [e.source for e in examples(tabulate.__doc__)]
        for name in NAMES:
            self.assertTrue(any(name in s for s in sources), f"no example uses {name}")

    def test_module_doctests_pass(self):
        result = doctest.testmod(tabulate_module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
        self.assertEqual(result.failed, 0)
        self.assertGreaterEqual(result.attempted, 90)


class ReadmeTest(unittest.TestCase):
    def test_readme_mentions(self):
        text = (APP / "README.md").read_text(encoding="utf-8")
        for name in ("rowalign", "maxheadercolwidths"):
            self.assertRegex(text, r"\b%s\b" % name)

    def test_readme_examples_run(self):
        parsed = examples(readme_text())
        for name in ("rowalign", "maxheadercolwidths"):
            chosen = [e for e in parsed if name in e.source]
            self.assertTrue(chosen, f"README has no example of {name}")
            globs = {k: v for k, v in vars(tabulate_module).items() if not k.startswith("_")}
            globs["tabulate"] = tabulate
            test = doctest.DocTest(chosen, globs, "README-" + name, "README.md", 0, None)
            runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
            runner.run(test)
            self.assertEqual(runner.failures, 0, f"README examples of {name} fail")


if __name__ == "__main__":
    unittest.main()
