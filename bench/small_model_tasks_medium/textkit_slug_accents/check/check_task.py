from textkit import slugify
from textkit.cli import main
from textkit.slug import unique_slug


def test_accents_are_dropped_not_the_letters():
    assert slugify("Crème brûlée") == "creme-brulee"
    assert slugify("Ångström à la carte") == "angstrom-a-la-carte"
    assert slugify("Straße in Łódź & Øresund") == "strasse-in-lodz-and-oresund"


def test_plain_titles_are_unchanged():
    assert slugify("Hello, World!") == "hello-world"
    assert unique_slug("Café", {"cafe"}) == "cafe-2"


def test_the_command(capsys):
    assert main(["slug", "Déjà", "vu"]) == 0
    assert capsys.readouterr().out.strip() == "deja-vu"
