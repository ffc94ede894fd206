"""The agent's ported test suite must run under plain unittest, pass on the
real code, and still catch known-bad variants of the library."""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

APP = "/app"

MUTANTS = {
    "key_rotation": (
        "signer.py",
        "        for secret_key in reversed(self.secret_keys):\n            key = self.derive_key(secret_key)",
        "        for secret_key in self.secret_keys[-1:]:\n            key = self.derive_key(secret_key)",
    ),
    "max_age_ignored": ("timed.py", "            if age > max_age:", "            if age > max_age + 3600:"),
    "future_age_ok": ("timed.py", "            if age < 0:", "            if age < -10**12:"),
    "no_compress_flag": (
        "url_safe.py",
        "            json = compressed\n            is_compressed = True",
        "            json = compressed\n            is_compressed = False",
    ),
    "int_bytes_pad": ("encoding.py", 'return _int_to_bytes(num).lstrip(b"\\x00")', "return _int_to_bytes(num)"),
    "no_fallbacks": ("serializer.py", "        for fallback in self.fallback_signers:", "        for fallback in []:"),
    "sep_check": ("signer.py", "        if self.sep in _base64_alphabet:", "        if False:"),
    "loads_unsafe_payload": (
        "serializer.py",
        "                    self.load_payload(e.payload, **load_payload_kwargs),",
        "                    None,",
    ),
}


def run_suite(src_dir):
    tmp = tempfile.mkdtemp()
    try:
        root = os.path.join(tmp, "proj")
        shutil.copytree(os.path.join(APP, "tests"), os.path.join(root, "tests"), ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(src_dir, os.path.join(root, "src"), ignore=shutil.ignore_patterns("__pycache__"))
        env = dict(os.environ, PYTHONPATH=os.path.join(root, "src"), PYTHONDONTWRITEBYTECODE="1")
        proc = subprocess.run(
            [sys.executable, "-m", "unittest", "discover", "-s", "tests", "-t", "tests"],
            cwd=root, env=env, capture_output=True, text=True, timeout=120,
        )
        out = proc.stdout + proc.stderr
        m = re.search(r"^Ran (\d+) tests?", out, re.M)
        return proc.returncode, int(m.group(1)) if m else 0, out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class UnittestPortTest(unittest.TestCase):
    def test_no_pytest_or_freezegun(self):
        files = glob.glob(os.path.join(APP, "tests", "**", "*.py"), recursive=True)
        self.assertTrue(files)
        for path in files:
            with open(path, encoding="utf-8") as f:
                src = f.read()
            with self.subTest(path=path):
                self.assertNotRegex(src, r"(?m)^\s*(import|from)\s+(pytest|freezegun)\b")

    def test_all_test_modules_kept(self):
        for name in ("test_encoding", "test_serializer", "test_signer", "test_timed", "test_url_safe"):
            with self.subTest(name=name):
                self.assertTrue(glob.glob(os.path.join(APP, "tests", "**", name + ".py"), recursive=True))

    def test_suite_passes(self):
        rc, ran, out = run_suite(os.path.join(APP, "src"))
        self.assertEqual(rc, 0, out[-3000:])
        self.assertGreaterEqual(ran, 40, out[-3000:])
        self.assertNotIn("_FailedTest", out)

    def test_suite_catches_mutants(self):
        for name, (fname, old, new) in MUTANTS.items():
            with self.subTest(mutant=name):
                tmp = tempfile.mkdtemp()
                try:
                    src = os.path.join(tmp, "src")
                    shutil.copytree(os.path.join(APP, "src"), src, ignore=shutil.ignore_patterns("__pycache__"))
                    path = os.path.join(src, "itsdangerous", fname)
                    with open(path) as f:
                        code = f.read()
                    self.assertIn(old, code, "library code changed; cannot apply mutant")
                    with open(path, "w") as f:
                        f.write(code.replace(old, new, 1))
                    rc, ran, out = run_suite(src)
                    self.assertNotEqual(rc, 0, "suite still passes with mutant %s" % name)
                    self.assertGreater(ran, 1, out[-2000:])
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
