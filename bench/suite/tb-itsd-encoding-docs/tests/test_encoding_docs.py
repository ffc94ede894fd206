import doctest
import sys
import unittest

sys.path.insert(0, "/app/src")

import itsdangerous.encoding as enc  # noqa: E402

FUNCS = ("want_bytes", "base64_encode", "base64_decode", "int_to_bytes", "bytes_to_int")


class EncodingDocsTest(unittest.TestCase):
    def test_doctests_pass(self):
        result = doctest.testmod(enc, verbose=False, report=True)
        self.assertEqual(result.failed, 0)
        self.assertGreaterEqual(result.attempted, len(FUNCS))

    def test_each_function_documented_with_example(self):
        finder = doctest.DocTestFinder()
        for name in FUNCS:
            with self.subTest(name=name):
                func = getattr(enc, name)
                doc = func.__doc__ or ""
                self.assertGreater(len(doc.split()), 5, "docstring missing or too short")
                tests = [t for t in finder.find(func, name, module=enc, globs=vars(enc).copy())]
                examples = sum(len(t.examples) for t in tests)
                self.assertGreaterEqual(examples, 1, "no doctest example")
                runner = doctest.DocTestRunner(verbose=False)
                for t in tests:
                    runner.run(t, out=lambda s: None)
                self.assertEqual(runner.failures, 0)

    def test_behaviour_unchanged(self):
        self.assertEqual(enc.want_bytes("mañana"), "mañana".encode())
        self.assertEqual(enc.base64_encode(b"\xfb\xff"), b"-_8")
        self.assertEqual(enc.base64_decode("-_8"), b"\xfb\xff")
        self.assertEqual(enc.int_to_bytes(192), b"\xc0")
        self.assertEqual(enc.bytes_to_int(b"\x04\x00"), 1024)
        with self.assertRaises(enc.BadData):
            enc.base64_decode("12345")


if __name__ == "__main__":
    unittest.main()
