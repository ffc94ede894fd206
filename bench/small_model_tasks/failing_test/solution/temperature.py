"""Conversions between temperature scales."""


def fahrenheit(celsius):
    """Degrees Celsius in degrees Fahrenheit."""
    return celsius * 9 / 5 + 32


def kelvin(celsius):
    """Degrees Celsius in kelvin."""
    return celsius + 273.15
