"""Describes shapes in plain words."""

from geometry import circle_area, rect_area


def describe_rect(width, height):
    return f"{width}x{height} rectangle, area {rect_area(width, height)}"


def describe_circle(radius):
    return f"circle of radius {radius}, area {circle_area(radius):.1f}"
