import unittest
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from functools import partial
from unittest import mock

from itsdangerous.exc import BadTimeSignature
from itsdangerous.exc import SignatureExpired
from itsdangerous.signer import Signer
from itsdangerous.timed import TimedSerializer
from itsdangerous.timed import TimestampSigner
from test_itsdangerous.test_serializer import SerializerTests
from test_itsdangerous.test_signer import SignerTests


class FreezeMixin:
    """Freeze ``time.time`` at :attr:`ts` for each test. :meth:`tick`
    and :meth:`freeze_at` move the frozen clock.
    """

    ts = datetime(2011, 6, 24, 0, 9, 5, tzinfo=timezone.utc)

    def setUp(self):
        self.now = self.ts.timestamp()
        patcher = mock.patch("time.time", side_effect=lambda: self.now)
        patcher.start()
        self.addCleanup(patcher.stop)
        super().setUp()

    def tick(self, delta=timedelta(seconds=1)):
        self.now += delta.total_seconds()

    def freeze_at(self, dt):
        self.now = dt.timestamp()


class TestTimestampSigner(FreezeMixin, SignerTests, unittest.TestCase):
    def signer_factory(self, **kwargs):
        return partial(TimestampSigner, secret_key="secret-key")(**kwargs)

    def test_max_age(self):
        signer = self.signer
        signed = signer.sign("value")
        self.tick()
        self.assertEqual(signer.unsign(signed, max_age=10), b"value")
        self.tick(timedelta(seconds=10))

        with self.assertRaises(SignatureExpired) as cm:
            signer.unsign(signed, max_age=10)

        self.assertEqual(cm.exception.date_signed, self.ts)

    def test_return_timestamp(self):
        signed = self.signer.sign("value")
        self.assertEqual(
            self.signer.unsign(signed, return_timestamp=True), (b"value", self.ts)
        )

    def test_timestamp_missing(self):
        other = Signer("secret-key")
        signed = other.sign("value")

        with self.assertRaises(BadTimeSignature) as cm:
            self.signer.unsign(signed)

        self.assertIn("missing", str(cm.exception))
        self.assertIsNone(cm.exception.date_signed)

    def test_malformed_timestamp(self):
        other = Signer("secret-key")
        signed = other.sign(b"value.____________")

        with self.assertRaises(BadTimeSignature) as cm:
            self.signer.unsign(signed)

        self.assertIn("Malformed", str(cm.exception))
        self.assertIsNone(cm.exception.date_signed)

    def test_malformed_future_timestamp(self):
        signed = b"value.TgPVoaGhoQ.AGBfQ6G6cr07byTRt0zAdPljHOY"

        with self.assertRaises(BadTimeSignature) as cm:
            self.signer.unsign(signed)

        self.assertIn("Malformed", str(cm.exception))
        self.assertIsNone(cm.exception.date_signed)

    def test_future_age(self):
        signed = self.signer.sign("value")
        self.freeze_at(datetime(1971, 5, 31, tzinfo=timezone.utc))

        with self.assertRaises(SignatureExpired) as cm:
            self.signer.unsign(signed, max_age=10)

        self.assertIsInstance(cm.exception.date_signed, datetime)

    def test_sig_error_date_signed(self):
        signed = self.signer.sign("my string").replace(b"my", b"other", 1)

        with self.assertRaises(BadTimeSignature) as cm:
            self.signer.unsign(signed)

        self.assertIsInstance(cm.exception.date_signed, datetime)


class TimedSerializerTests(FreezeMixin, SerializerTests):
    def serializer_factories(self):
        return [partial(TimedSerializer, secret_key="secret_key")]

    def test_max_age(self):
        for factory, value in self.cases():
            with self.subTest(factory=factory, value=value):
                self.freeze_at(self.ts)
                serializer = factory()
                signed = serializer.dumps(value)
                self.tick()
                self.assertEqual(serializer.loads(signed, max_age=10), value)
                self.tick(timedelta(seconds=10))

                with self.assertRaises(SignatureExpired) as cm:
                    serializer.loads(signed, max_age=10)

                self.assertEqual(cm.exception.date_signed, self.ts)
                self.assertEqual(serializer.load_payload(cm.exception.payload), value)

    def test_return_payload(self):
        for factory, value in self.cases():
            with self.subTest(factory=factory, value=value):
                serializer = factory()
                signed = serializer.dumps(value)
                self.assertEqual(
                    serializer.loads(signed, return_timestamp=True), (value, self.ts)
                )


class TestTimedSerializer(TimedSerializerTests, unittest.TestCase):
    pass
