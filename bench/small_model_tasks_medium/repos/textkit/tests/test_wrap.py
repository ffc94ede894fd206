from textkit.wrap import dedent, fill, indent, shorten, wrap


def test_wrap_fills_lines_up_to_the_width():
    assert wrap("the quick brown fox jumps over the lazy dog", 15) == [
        "the quick brown",
        "fox jumps over",
        "the lazy dog",
    ]


def test_indents_count_in_the_width():
    assert wrap("aa bb cc dd", 7, initial_indent="> ", subsequent_indent="  ") == [
        "> aa bb",
        "  cc dd",
    ]


def test_fill_keeps_paragraphs_apart():
    assert fill("one two\nthree\n\nfour", 9) == "one two\nthree\n\nfour"


def test_indent_dedent_and_shorten():
    assert indent("a\n\nb\n", "  ") == "  a\n\n  b\n"
    assert dedent("    a\n      b\n") == "a\n  b\n"
    assert shorten("hello there world", 12) == "hello there…"
