"""
This module defines a method to parse an ISO 8601:2004 date time string.

For this job it uses the parse_date and parse_time methods defined in date
and time module.
"""

from datetime import datetime, timedelta

from isodate.isodates import parse_date
from isodate.isoerror import ISO8601Error
from isodate.isostrf import DATE_EXT_COMPLETE, TIME_EXT_COMPLETE, TZ_EXT, strftime
from isodate.isotime import _parse_time


def parse_datetime(datetimestring):
    """
    Parses ISO 8601 date-times into datetime.datetime objects.

    This function uses parse_date and parse_time to do the job, so it allows
    more combinations of date and time representations, than the actual
    ISO 8601:2004 standard allows.

    The end of a day may be written as 24:00 (e.g. 2007-04-05T24:00); it is
    returned as midnight of the following day (2007-04-06T00:00).
    """
    try:
        datestring, timestring = datetimestring.split("T")
    except ValueError:
        raise ISO8601Error(
            "ISO 8601 time designator 'T' missing. Unable to"
            " parse datetime string %r" % datetimestring
        )
    tmpdate = parse_date(datestring)
    tmptime, end_of_day = _parse_time(timestring)
    ret = datetime.combine(tmpdate, tmptime)
    if end_of_day:
        ret += timedelta(days=1)
    return ret


def datetime_isoformat(
    tdt, format=DATE_EXT_COMPLETE + "T" + TIME_EXT_COMPLETE + TZ_EXT
):
    """
    Format datetime strings.

    This method is just a wrapper around isodate.isostrf.strftime and uses
    Extended-Complete as default format.
    """
    return strftime(tdt, format)
