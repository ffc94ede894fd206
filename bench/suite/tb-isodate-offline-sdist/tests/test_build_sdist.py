import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

APP = "/app"


class BuildSdistTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.proj = os.path.join(cls.tmp, "isodate")
        shutil.copytree(APP, cls.proj, ignore=shutil.ignore_patterns("dist", "build", "*.egg-info", "__pycache__", ".git"))
        env = dict(os.environ, PIP_NO_INDEX="1")
        script = os.path.join(cls.proj, "scripts", "build-sdist.sh")
        if os.path.exists(script):
            cls.proc = subprocess.run(["bash", "scripts/build-sdist.sh"], cwd=cls.proj, env=env, capture_output=True, text=True, timeout=90)
        else:
            cls.proc = None

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def _sdist(self):
        self.assertIsNotNone(self.proc, "scripts/build-sdist.sh missing")
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        path = os.path.join(self.proj, "dist", "isodate-0.7.2.tar.gz")
        self.assertTrue(os.path.exists(path), "no dist/isodate-0.7.2.tar.gz; dist has %r" % (os.listdir(os.path.join(self.proj, "dist")) if os.path.isdir(os.path.join(self.proj, "dist")) else None))
        return path

    def test_sdist_built_with_version(self):
        self._sdist()
        others = [n for n in os.listdir(os.path.join(self.proj, "dist")) if "0.0.0" in n]
        self.assertEqual(others, [])

    def test_sdist_contents(self):
        with tarfile.open(self._sdist()) as tf:
            names = tf.getnames()
            self.assertIn("isodate-0.7.2/src/isodate/duration.py", names)
            self.assertIn("isodate-0.7.2/src/isodate/__init__.py", names)
            self.assertIn("isodate-0.7.2/LICENSE", names)
            pkginfo = tf.extractfile("isodate-0.7.2/PKG-INFO").read().decode()
        self.assertIn("Version: 0.7.2", pkginfo)
        self.assertIn("Name: isodate", pkginfo)

    def test_package_version_still_importable(self):
        out = subprocess.run(
            [sys.executable, "-c", "import isodate; print(isodate.__version__)"],
            cwd=self.tmp, env=dict(os.environ, PYTHONPATH=os.path.join(APP, "src")), capture_output=True, text=True,
        )
        self.assertEqual(out.stdout.strip(), "0.7.2", out.stderr)


if __name__ == "__main__":
    unittest.main()
