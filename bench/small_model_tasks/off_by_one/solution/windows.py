"""Sliding-window helpers for short numeric series."""


def moving_sums(values, width):
    """Return the sum of every run of `width` consecutive values, in order."""
    if width <= 0:
        raise ValueError("width must be positive")
    sums = []
    for start in range(len(values) - width + 1):
        sums.append(sum(values[start : start + width]))
    return sums


def moving_means(values, width):
    """Return the mean of every run of `width` consecutive values."""
    return [total / width for total in moving_sums(values, width)]
