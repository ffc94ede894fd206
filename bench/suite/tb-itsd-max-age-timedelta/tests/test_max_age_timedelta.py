import sys
import unittest
from datetime import timedelta
from unittest import mock

sys.path.insert(0, "/app/src")

from itsdangerous import (  # noqa: E402
    SignatureExpired,
    TimedSerializer,
    TimestampSigner,
    URLSafeTimedSerializer,
)

T0 = 1_300_000_000.0


class MaxAgeTimedeltaTest(unittest.TestCase):
    def at(self, offset):
        return mock.patch("time.time", return_value=T0 + offset)

    def test_signer_unsign(self):
        s = TimestampSigner("secret")
        with self.at(0):
            tok = s.sign("value")
        with self.at(50):
            self.assertEqual(s.unsign(tok, max_age=timedelta(minutes=1)), b"value")
        with self.at(61):
            with self.assertRaises(SignatureExpired) as cm:
                s.unsign(tok, max_age=timedelta(minutes=1))
        self.assertEqual(cm.exception.date_signed.timestamp(), T0)

    def test_signer_validate(self):
        s = TimestampSigner("secret")
        with self.at(0):
            tok = s.sign("value")
        with self.at(5):
            self.assertTrue(s.validate(tok, max_age=timedelta(seconds=10)))
        with self.at(11):
            self.assertFalse(s.validate(tok, max_age=timedelta(seconds=10)))

    def test_return_timestamp(self):
        s = TimestampSigner("secret")
        with self.at(0):
            tok = s.sign("value")
        with self.at(1):
            value, ts = s.unsign(tok, max_age=timedelta(hours=1), return_timestamp=True)
        self.assertEqual(value, b"value")
        self.assertEqual(ts.timestamp(), T0)

    def test_serializers(self):
        for cls in (TimedSerializer, URLSafeTimedSerializer):
            with self.subTest(cls=cls.__name__):
                s = cls("secret", salt="x")
                with self.at(0):
                    tok = s.dumps({"a": 1})
                with self.at(3599):
                    self.assertEqual(s.loads(tok, max_age=timedelta(hours=1)), {"a": 1})
                    self.assertEqual(s.loads_unsafe(tok, max_age=timedelta(hours=1)), (True, {"a": 1}))
                    payload, ts = s.loads(tok, max_age=timedelta(hours=1), return_timestamp=True)
                    self.assertEqual(payload, {"a": 1})
                with self.at(3601):
                    with self.assertRaises(SignatureExpired):
                        s.loads(tok, max_age=timedelta(hours=1))
                    self.assertEqual(s.loads_unsafe(tok, max_age=timedelta(hours=1)), (False, {"a": 1}))

    def test_seconds_still_work(self):
        s = URLSafeTimedSerializer("secret")
        with self.at(0):
            tok = s.dumps("v")
        with self.at(10):
            self.assertEqual(s.loads(tok, max_age=10), "v")
            self.assertEqual(s.loads(tok), "v")
        with self.at(11):
            with self.assertRaises(SignatureExpired):
                s.loads(tok, max_age=10)

    def test_future_signature_still_rejected(self):
        s = TimestampSigner("secret")
        with self.at(100):
            tok = s.sign("v")
        with self.at(0):
            with self.assertRaises(SignatureExpired):
                s.unsign(tok, max_age=timedelta(minutes=5))


if __name__ == "__main__":
    unittest.main()
