"""Areas and perimeters of simple shapes."""

import math


def area_of_rect(width, height):
    return width * height


def circle_area(radius):
    return math.pi * radius**2
