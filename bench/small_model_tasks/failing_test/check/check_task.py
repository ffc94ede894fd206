from temperature import fahrenheit


def test_more_points():
    assert fahrenheit(-40) == -40
    assert fahrenheit(37) == 98.6
