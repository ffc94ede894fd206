from textkit.slug import slugify, unique_slug


def test_words_are_joined_in_lower_case():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  many   spaces  ") == "many-spaces"


def test_separator_and_stopwords():
    assert slugify("The Art of War", "_", stopwords=frozenset({"the", "of"})) == "art_war"


def test_long_titles_are_cut_at_a_word():
    assert slugify("one two three four", max_length=10) == "one-two"


def test_unique_slugs_get_a_number():
    taken: set[str] = set()
    assert [unique_slug("Post", taken) for _ in range(3)] == ["post", "post-2", "post-3"]
