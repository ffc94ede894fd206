"""
Test cases for the isotzinfo module.
"""

from datetime import timedelta

import pytest

from isodate import UTC, ISO8601Error, parse_tzinfo


@pytest.mark.parametrize(
    "tzstring, offset",
    [
        ("Z", timedelta(0)),
        ("+01:00", timedelta(hours=1)),
        ("-0530", timedelta(hours=-5, minutes=-30)),
        ("+12", timedelta(hours=12)),
    ],
)
def test_parse_tzinfo(tzstring, offset):
    tzinfo = parse_tzinfo(tzstring)
    assert tzinfo.utcoffset(None) == offset


def test_parse_tzinfo_utc():
    assert parse_tzinfo("Z") is UTC


@pytest.mark.parametrize("tzstring", ["+01:00x", "Z ", "+0100junk", "+1", "UTC"])
def test_parse_tzinfo_rejects_garbage(tzstring):
    with pytest.raises(ISO8601Error):
        parse_tzinfo(tzstring)
