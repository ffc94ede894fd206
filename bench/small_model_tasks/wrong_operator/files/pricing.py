"""Price arithmetic for the shop's checkout."""


def with_tax(price, rate_percent):
    """The price with a sales tax of `rate_percent` added."""
    return round(price * (1 + rate_percent / 100), 2)


def discounted(price, percent):
    """The price after taking `percent` off."""
    return round(price * (1 + percent / 100), 2)
