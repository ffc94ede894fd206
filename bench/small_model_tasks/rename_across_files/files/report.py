"""Describes shapes in plain words."""

from geometry import area_of_rect, circle_area


def describe_rect(width, height):
    return f"{width}x{height} rectangle, area {area_of_rect(width, height)}"


def describe_circle(radius):
    return f"circle of radius {radius}, area {circle_area(radius):.1f}"
