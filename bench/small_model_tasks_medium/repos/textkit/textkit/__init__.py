"""textkit: small, dependency-free text utilities."""

from textkit.case import to_camel, to_kebab, to_pascal, to_snake, to_title
from textkit.slug import slugify
from textkit.tables import render_table
from textkit.wrap import fill, shorten, wrap

__all__ = [
    "fill",
    "render_table",
    "shorten",
    "slugify",
    "to_camel",
    "to_kebab",
    "to_pascal",
    "to_snake",
    "to_title",
    "wrap",
]
__version__ = "1.3.0"
