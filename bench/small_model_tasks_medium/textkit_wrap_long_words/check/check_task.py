from textkit.wrap import fill, wrap

URL = "https://example.com/a/very/long/path/to/somewhere"


def test_a_long_word_gets_a_line_of_its_own():
    assert wrap(f"see {URL} for more", 20) == ["see", URL, "for more"]
    assert wrap("a b supercalifragilistic c d", 6) == ["a b", "supercalifragilistic", "c d"]


def test_a_long_first_word():
    assert wrap("supercalifragilistic is long", 10) == ["supercalifragilistic", "is long"]


def test_with_indents_and_fill():
    assert wrap(f"x {URL}", 12, "> ", "  ") == ["> x", f"  {URL}"]
    assert fill(f"one {URL}\n\ntwo", 10) == f"one\n{URL}\n\ntwo"


def test_every_word_is_kept():
    text = "lorem " + "y" * 30 + " ipsum dolor " + "z" * 25 + " sit"
    assert " ".join(wrap(text, 12)).split() == text.split()
