from textkit.tokens import char_ngrams, ngrams, sentences, syllables, words


def test_words_keep_inner_apostrophes():
    assert words("Don't stop—believing, 2 times!") == ["Don't", "stop", "believing", "2", "times"]


def test_sentences_do_not_split_after_abbreviations():
    text = "Dr. Smith arrived. She said hello! Was it 5 p.m.? Yes."
    assert sentences(text) == ["Dr. Smith arrived.", "She said hello!", "Was it 5 p.m.?", "Yes."]


def test_ngrams():
    assert list(ngrams(["a", "b", "c"], 2)) == [("a", "b"), ("b", "c")]
    assert char_ngrams("ab", 2) == [" a", "ab", "b "]


def test_syllables_are_estimated():
    assert [syllables(word) for word in ["cat", "table", "make", "reading"]] == [1, 2, 1, 2]
