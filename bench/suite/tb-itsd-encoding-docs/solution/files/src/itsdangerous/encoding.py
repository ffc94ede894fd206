from __future__ import annotations

import base64
import string
import struct
import typing as t

from .exc import BadData


def want_bytes(
    s: str | bytes, encoding: str = "utf-8", errors: str = "strict"
) -> bytes:
    """Return ``s`` as bytes. Text is encoded with ``encoding`` (UTF-8 by
    default) and ``errors``; bytes are returned unchanged.

    >>> want_bytes("mañana")
    b'ma\\xc3\\xb1ana'
    >>> want_bytes(b"tomorrow")
    b'tomorrow'
    >>> want_bytes("mañana", encoding="ascii", errors="ignore")
    b'maana'
    """
    if isinstance(s, str):
        s = s.encode(encoding, errors)

    return s


def base64_encode(string: str | bytes) -> bytes:
    """Base64 encode a string of bytes or text. The resulting bytes are
    safe to use in URLs: the URL-safe alphabet is used (``-`` and ``_``
    instead of ``+`` and ``/``) and the ``=`` padding is stripped. Text is
    encoded as UTF-8 first.

    >>> base64_encode(b"infinite")
    b'aW5maW5pdGU'
    >>> base64_encode(b"\\xfb\\xff")
    b'-_8'
    """
    string = want_bytes(string)
    return base64.urlsafe_b64encode(string).rstrip(b"=")


def base64_decode(string: str | bytes) -> bytes:
    """Base64 decode a URL-safe string of bytes or text. The result is
    bytes. Missing ``=`` padding is added back, so the output of
    :func:`base64_encode` can be passed directly.

    >>> base64_decode(b"aW5maW5pdGU")
    b'infinite'
    >>> base64_decode("-_8")
    b'\\xfb\\xff'

    :raises BadData: if the input is not valid base64.

    >>> base64_decode("12345")
    Traceback (most recent call last):
      ...
    itsdangerous.exc.BadData: Invalid base64-encoded data
    """
    string = want_bytes(string, encoding="ascii", errors="ignore")
    string += b"=" * (-len(string) % 4)

    try:
        return base64.urlsafe_b64decode(string)
    except (TypeError, ValueError) as e:
        raise BadData("Invalid base64-encoded data") from e


# The alphabet used by base64.urlsafe_*
_base64_alphabet = f"{string.ascii_letters}{string.digits}-_=".encode("ascii")

_int64_struct = struct.Struct(">Q")
_int_to_bytes = _int64_struct.pack
_bytes_to_int = t.cast("t.Callable[[bytes], tuple[int]]", _int64_struct.unpack)


def int_to_bytes(num: int) -> bytes:
    """Encode a non-negative integer (at most 64 bits) as big-endian bytes,
    without leading zero bytes. Used for the timestamps of
    :class:`~itsdangerous.timed.TimestampSigner`.

    >>> int_to_bytes(192)
    b'\\xc0'
    >>> int_to_bytes(1024)
    b'\\x04\\x00'
    >>> int_to_bytes(0)
    b''
    """
    return _int_to_bytes(num).lstrip(b"\x00")


def bytes_to_int(bytestr: bytes) -> int:
    """Decode big-endian bytes (at most 8) into an integer; the reverse of
    :func:`int_to_bytes`.

    >>> bytes_to_int(b"\\x04\\x00")
    1024
    >>> bytes_to_int(int_to_bytes(2**64 - 1)) == 2**64 - 1
    True
    """
    return _bytes_to_int(bytestr.rjust(8, b"\x00"))[0]
