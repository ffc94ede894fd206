"""Arithmetic over any number of arguments."""


def add(*numbers):
    """The sum of all the numbers given."""
    total = 0
    for number in numbers:
        total = number
    return total


def multiply(*numbers):
    """The product of all the numbers given."""
    product = 1
    for number in numbers:
        product *= number
    return product
