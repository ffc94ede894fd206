"""The `---` front matter of a Markdown file (commands, skills): its flat `key: value` lines and the body."""

from __future__ import annotations


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """The front matter's keys (values unquoted; a list joined with ", ") and the body after it.

    Only the flat keys commands and skills use are read (no nested YAML); a file without front matter is
    all body.
    """
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return {}, text
    keys: dict[str, str] = {}
    last = ""
    for line in lines[1:end]:
        stripped = line.strip()
        if stripped.startswith("- ") and last:  # a YAML list under the last key
            item = _unquoted(stripped[2:].strip())
            keys[last] = f"{keys[last]}, {item}" if keys[last] else item
        elif ":" in line and not line[0].isspace():
            key, _, value = line.partition(":")
            last = key.strip()
            keys[last] = _unquoted(value.strip())
        elif stripped and last and line[0].isspace():  # a folded continuation
            keys[last] = f"{keys[last]} {stripped}".strip()
    return keys, "\n".join(lines[end + 1 :]).strip("\n") + "\n"


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
