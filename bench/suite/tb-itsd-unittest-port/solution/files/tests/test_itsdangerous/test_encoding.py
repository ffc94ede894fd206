import unittest

from itsdangerous.encoding import base64_decode
from itsdangerous.encoding import base64_encode
from itsdangerous.encoding import bytes_to_int
from itsdangerous.encoding import int_to_bytes
from itsdangerous.encoding import want_bytes
from itsdangerous.exc import BadData


class TestEncoding(unittest.TestCase):
    def test_want_bytes(self):
        for value in ("mañana", b"tomorrow"):
            with self.subTest(value=value):
                out = want_bytes(value)
                self.assertIsInstance(out, bytes)

    def test_base64(self):
        for value in ("無限", b"infinite"):
            with self.subTest(value=value):
                enc = base64_encode(value)
                self.assertIsInstance(enc, bytes)
                dec = base64_decode(enc)
                self.assertEqual(dec, want_bytes(value))

    def test_base64_bad(self):
        with self.assertRaises(BadData):
            base64_decode("12345")

    def test_int_bytes(self):
        for value, expect in (
            (0, b""),
            (192, b"\xc0"),
            (18446744073709551615, b"\xff" * 8),
        ):
            with self.subTest(value=value):
                enc = int_to_bytes(value)
                self.assertEqual(enc, expect)
                dec = bytes_to_int(enc)
                self.assertEqual(dec, value)
