"""Formatting of people's names for badges and lists."""


def initials(full_name):
    """The upper-case first letter of each part of the name: "ada lovelace" -> "AL"."""
    if full_name is None:
        return ""
    return "".join(part[0].upper() for part in full_name.split())


def surname_first(full_name):
    """The name as "Surname, Given": "Ada Lovelace" -> "Lovelace, Ada"."""
    *given, surname = full_name.split()
    return f"{surname}, {' '.join(given)}" if given else surname
