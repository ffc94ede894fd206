from people import initials, surname_first


def test_none_gives_empty_string():
    assert initials(None) == ""


def test_names_unchanged():
    assert initials("ada king lovelace") == "AKL"
    assert initials("") == ""
    assert surname_first("Grace Hopper") == "Hopper, Grace"
