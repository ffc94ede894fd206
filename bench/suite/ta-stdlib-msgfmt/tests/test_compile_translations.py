import configparser
import gettext
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

APP = pathlib.Path("/app") if pathlib.Path("/app/src/humanize").is_dir() else pathlib.Path.cwd()
EXPECTED = pathlib.Path(__file__).resolve().parent / "expected_mo"
LOCALES = ["de_DE", "es_ES", "fr_FR", "pt_BR", "ru_RU"]

# babel (and anything from it) is not importable while the script runs
RUN = ("import runpy, sys; sys.modules['babel'] = None; sys.argv = ['scripts/compile_translations.py']; "
       "runpy.run_path('scripts/compile_translations.py', run_name='__main__')")


def catalog(path):
    with open(path, "rb") as f:
        t = gettext.GNUTranslations(f)
    return t, {k: v for k, v in t._catalog.items() if k != ""}


class CompileTranslationsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.work = pathlib.Path(cls.tmp) / "app"
        shutil.copytree(APP, cls.work, ignore=shutil.ignore_patterns(".tox", ".git", "__pycache__"))
        locale = cls.work / "src" / "humanize" / "locale"
        for mo in locale.glob("*/LC_MESSAGES/*.mo"):
            mo.unlink()
        # a new translation must end up in the compiled catalog (so nothing is copied from elsewhere)
        po = locale / "fr_FR" / "LC_MESSAGES" / "humanize.po"
        text = po.read_text(encoding="utf-8")
        assert 'msgid "tomorrow"\nmsgstr "demain"' in text
        po.write_text(text.replace('msgid "tomorrow"\nmsgstr "demain"', 'msgid "tomorrow"\nmsgstr "le lendemain"'),
                      encoding="utf-8")
        cls.proc = subprocess.run([sys.executable, "-c", RUN], cwd=cls.work, capture_output=True,
                                  text=True, timeout=60, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def mo(self, loc):
        return self.work / "src" / "humanize" / "locale" / loc / "LC_MESSAGES" / "humanize.mo"

    def test_script_succeeds(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        for loc in LOCALES:
            self.assertTrue(self.mo(loc).is_file(), loc)

    def test_catalogs_match_pybabel(self):
        for loc in LOCALES:
            with self.subTest(locale=loc):
                got_t, got = catalog(self.mo(loc))
                want_t, want = catalog(EXPECTED / f"{loc}.mo")
                if loc == "fr_FR":
                    want["tomorrow"] = "le lendemain"
                self.assertEqual(got, want)
                self.assertEqual([got_t.plural(n) for n in range(120)], [want_t.plural(n) for n in range(120)])
                self.assertEqual(got_t.charset().lower().replace("-", ""), "utf8")

    def test_humanize_uses_compiled_catalogs(self):
        code = ("import sys; sys.path.insert(0, 'src'); import datetime as dt, humanize; "
                "humanize.activate('ru_RU'); print(humanize.naturaldelta(dt.timedelta(days=5))); "
                "print(humanize.ordinal(3)); humanize.activate('fr_FR'); print(humanize.intword(2_000_000))")
        p = subprocess.run([sys.executable, "-c", code], cwd=self.work, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split("\n")[:3], ["5 дней", "3ий", "2,0 millions"])

    def test_tox_uses_script(self):
        cfg = configparser.ConfigParser(interpolation=None)
        cfg.read(APP / "tox.ini")
        text = (APP / "tox.ini").read_text()
        self.assertNotIn("pybabel", text)
        commands = cfg["testenv:compile-translations"]["commands"]
        self.assertIn("compile_translations.py", commands)


if __name__ == "__main__":
    unittest.main()
