"""Small summary statistics over lists of numbers."""


def mean(values):
    """The arithmetic mean of the values."""
    if not values:
        return None
    return sum(values) / len(values)


def spread(values):
    """The distance between the largest and the smallest value."""
    if not values:
        return None
    return max(values) - min(values)
