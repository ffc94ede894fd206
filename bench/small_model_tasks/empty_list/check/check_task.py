from stats import mean, spread


def test_empty_lists_give_none():
    assert mean([]) is None
    assert spread([]) is None


def test_non_empty_lists_unchanged():
    assert mean([1, 2, 3, 6]) == 3
    assert spread([4, -1, 7]) == 8
