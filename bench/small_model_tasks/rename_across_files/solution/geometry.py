"""Areas and perimeters of simple shapes."""

import math


def rect_area(width, height):
    return width * height


def circle_area(radius):
    return math.pi * radius**2
