"""Text the model and people read: Jinja templates beside this file (`render` is the only way code turns them
into text) and the wording of counts (`plural`)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

_HERE = Path(__file__).parent


@cache
def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_HERE),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,  # the templates ship with keel: no stat of the file on every render
    )


@cache
def _template(name: str) -> jinja2.Template:
    return _environment().get_template(f"{name}.j2")


def render(template: str, /, **context: Any) -> str:
    """Render `prompts/<template>.j2` with the given variables (missing variables are an error)."""
    return _template(template).render(**context).strip()


def plural(count: int, word: str, many: str | None = None) -> str:
    """`plural(1, "line")` is "1 line", `plural(2, "match")` is "2 matches": the word in the plural unless the
    count is exactly 1."""
    if count == 1:
        return f"{count:,} {word}"
    if many is None:
        many = f"{word}es" if word.endswith(("ch", "sh", "s", "x")) else f"{word}s"
    return f"{count:,} {many}"
