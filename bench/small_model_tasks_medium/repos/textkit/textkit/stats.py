"""Text statistics: word frequencies, reading time, and the Flesch readability scores."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from textkit.stopwords import STOPWORDS
from textkit.tokens import sentences, syllables, words

WORDS_PER_MINUTE = 230


@dataclass
class TextStats:
    """Counts over one text."""

    characters: int
    words: int
    sentences: int
    syllables: int
    unique_words: int

    @property
    def words_per_sentence(self) -> float:
        """Average sentence length in words (0 for no sentences)."""
        return self.words / self.sentences if self.sentences else 0.0

    @property
    def syllables_per_word(self) -> float:
        """Average word length in syllables (0 for no words)."""
        return self.syllables / self.words if self.words else 0.0


def text_stats(text: str) -> TextStats:
    """The counts of `text`."""
    found = words(text)
    return TextStats(
        characters=len(text),
        words=len(found),
        sentences=len(sentences(text)),
        syllables=sum(syllables(word) for word in found),
        unique_words=len({word.lower() for word in found}),
    )


def word_frequencies(
    text: str, top: int | None = None, skip_stopwords: bool = True
) -> list[tuple[str, int]]:
    """The most common words of `text`, lower-cased, most frequent first (ties alphabetical)."""
    counts = Counter(
        word for word in words(text, lower=True) if not (skip_stopwords and word in STOPWORDS)
    )
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:top] if top is not None else ranked


def reading_minutes(text: str, words_per_minute: int = WORDS_PER_MINUTE) -> int:
    """Minutes an adult needs to read `text`, rounded up, at least 1 for any text."""
    count = len(words(text))
    if count == 0:
        return 0
    return max(1, -(-count // words_per_minute))


def flesch_reading_ease(text: str) -> float:
    """Flesch reading ease: about 90-100 very easy, 60-70 plain English, below 30 very hard."""
    stats = text_stats(text)
    if not stats.words or not stats.sentences:
        return 0.0
    return round(206.835 - 1.015 * stats.words_per_sentence - 84.6 * stats.syllables_per_word, 1)


def flesch_kincaid_grade(text: str) -> float:
    """Flesch-Kincaid grade level: the US school grade that can read `text`."""
    stats = text_stats(text)
    if not stats.words or not stats.sentences:
        return 0.0
    return round(0.39 * stats.words_per_sentence + 11.8 * stats.syllables_per_word - 15.59, 1)


def lexical_density(text: str) -> float:
    """The share of words that are not stop words, 0 to 1."""
    found = words(text, lower=True)
    if not found:
        return 0.0
    return sum(word not in STOPWORDS for word in found) / len(found)
