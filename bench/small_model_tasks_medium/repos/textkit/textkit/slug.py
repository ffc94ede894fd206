"""URL slugs: lower case ASCII words joined by a separator, accented letters transliterated."""

from __future__ import annotations

import re
import unicodedata

# letters that NFKD does not decompose into a base letter and a mark
SPECIAL = {
    "ß": "ss",
    "æ": "ae",
    "Æ": "AE",
    "ø": "o",
    "Ø": "O",
    "œ": "oe",
    "Œ": "OE",
    "đ": "d",
    "Đ": "D",
    "ð": "d",
    "Ð": "D",
    "þ": "th",
    "Þ": "TH",
    "ł": "l",
    "Ł": "L",
    "ı": "i",
    "ħ": "h",
    "Ħ": "H",
    "ŋ": "ng",
    "Ŋ": "NG",
    "&": " and ",
    "@": " at ",
    "%": " percent ",
    "+": " plus ",
}
NOT_WORD = re.compile(r"[^a-z0-9]+")
MAX_LENGTH = 80


def transliterate(text: str) -> str:
    """`text` in ASCII: special letters spelled out, accents dropped from their letters
    (`Crème` -> `Creme`), anything else without an ASCII form removed."""
    spelled = "".join(SPECIAL.get(char, char) for char in text)
    decomposed = unicodedata.normalize("NFKD", spelled)
    return (
        "".join(char for char in decomposed if not unicodedata.combining(char))
        .encode("ascii", "ignore")
        .decode("ascii")
    )


def slugify(
    text: str,
    separator: str = "-",
    max_length: int = MAX_LENGTH,
    stopwords: frozenset[str] = frozenset(),
) -> str:
    """A slug for `text`: its words in lower case ASCII joined by `separator`, at most `max_length`
    characters (cut at a word boundary), leaving out `stopwords`."""
    text = transliterate(text)
    words = [word for word in NOT_WORD.split(text.lower()) if word and word not in stopwords]
    slug = ""
    for word in words:
        candidate = f"{slug}{separator}{word}" if slug else word
        if len(candidate) > max_length:
            break
        slug = candidate
    if not slug and words:
        slug = words[0][:max_length]
    return slug


def unique_slug(text: str, taken: set[str], separator: str = "-") -> str:
    """A slug for `text` not in `taken` (`title`, `title-2`, `title-3`, ...), added to `taken`."""
    base = slugify(text, separator) or "item"
    slug, number = base, 2
    while slug in taken:
        slug = f"{base}{separator}{number}"
        number += 1
    taken.add(slug)
    return slug
