"""Tag lists for notes."""


def add_tag(tag, tags=[]):
    """The tag list with `tag` appended once (no duplicates); a new list when none is given."""
    if tag not in tags:
        tags.append(tag)
    return tags


def parse_tags(text):
    """The tags of a comma-separated list: "a, b ,c" -> ["a", "b", "c"]."""
    return [part.strip() for part in text.split(",") if part.strip()]
