import text_utils


def test_word_count():
    assert text_utils.word_count("the quick  brown fox") == 4
    assert text_utils.word_count("  one\ttwo\nthree ") == 3
    assert text_utils.word_count("") == 0


def test_existing_helpers_kept():
    assert text_utils.slugify("Hello, World!") == "hello-world"
    assert text_utils.shorten("abcdef", 4) == "abc…"
