from windows import moving_means, moving_sums


def test_every_window_is_summed():
    assert moving_sums([1, 2, 3, 4], 2) == [3, 5, 7]
    assert moving_sums([5, 5, 5], 3) == [15]
    assert moving_sums([1, 2], 3) == []


def test_means_follow():
    assert moving_means([2, 4, 6], 2) == [3.0, 5.0]
