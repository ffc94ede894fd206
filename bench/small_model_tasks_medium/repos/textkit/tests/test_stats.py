from textkit.entities import escape, strip_tags, unescape
from textkit.stats import reading_minutes, text_stats, word_frequencies


def test_counts():
    stats = text_stats("The cat sat. The cat ran!")
    assert (stats.words, stats.sentences, stats.unique_words) == (6, 2, 4)


def test_frequencies_skip_stop_words():
    assert word_frequencies("the cat and the dog and the cat", top=2) == [("cat", 2), ("dog", 1)]


def test_reading_time_rounds_up():
    assert reading_minutes("word " * 231) == 2
    assert reading_minutes("") == 0


def test_entities_round_trip():
    assert escape('<a href="x">') == "&lt;a href=&quot;x&quot;&gt;"
    assert unescape("&eacute;&#233;&#xE9;&bogus;") == "ééé&bogus;"
    assert strip_tags("<p>a&amp;b</p>  <i>c</i>") == "a&b c"
