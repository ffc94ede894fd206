from temperature import fahrenheit, kelvin


def test_boiling_point():
    assert fahrenheit(100) == 212


def test_freezing_point():
    assert fahrenheit(0) == 32
    assert kelvin(0) == 273.15
