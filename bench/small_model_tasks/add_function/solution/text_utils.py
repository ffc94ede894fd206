"""String helpers used by the blog generator."""

import re


def slugify(title):
    """A URL-safe slug: lower case, words joined by hyphens."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words)


def shorten(text, limit):
    """The text cut to at most `limit` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def word_count(text):
    """How many whitespace-separated words the text has."""
    return len(text.split())
