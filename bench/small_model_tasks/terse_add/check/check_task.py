from calc import add, multiply


def test_add_sums_everything():
    assert add(2, 3, 4) == 9
    assert add(5) == 5
    assert add() == 0
    assert add(-1, 1, 10) == 10


def test_multiply_unchanged():
    assert multiply(2, 3, 4) == 24
