from pricing import discounted, with_tax


def test_discount_lowers_the_price():
    assert discounted(200, 25) == 150
    assert discounted(80, 0) == 80
    assert discounted(19.99, 10) == 17.99


def test_tax_unchanged():
    assert with_tax(100, 20) == 120
