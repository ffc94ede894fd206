import hashlib
import unittest
from functools import partial

from itsdangerous.exc import BadSignature
from itsdangerous.signer import HMACAlgorithm
from itsdangerous.signer import NoneAlgorithm
from itsdangerous.signer import Signer
from itsdangerous.signer import SigningAlgorithm


class _ReverseAlgorithm(SigningAlgorithm):
    def get_signature(self, key, value):
        return (key + value)[::-1]


class SignerTests:
    """Tests shared by every signer class. Subclasses (that also derive
    from ``unittest.TestCase``) override :meth:`signer_factory`.
    """

    def signer_factory(self, **kwargs):
        return partial(Signer, secret_key="secret-key")(**kwargs)

    def setUp(self):
        super().setUp()
        self.signer = self.signer_factory()

    def test_signer(self):
        signer = self.signer
        signed = signer.sign("my string")
        self.assertIsInstance(signed, bytes)
        self.assertTrue(signer.validate(signed))
        out = signer.unsign(signed)
        self.assertEqual(out, b"my string")

    def test_no_separator(self):
        signer = self.signer
        signed = signer.sign("my string")
        signed = signed.replace(signer.sep, b"*", 1)
        self.assertFalse(signer.validate(signed))

        with self.assertRaises(BadSignature):
            signer.unsign(signed)

    def test_broken_signature(self):
        signer = self.signer
        signed = signer.sign("b")
        bad_signed = signed[:-1]
        bad_sig = bad_signed.rsplit(b".", 1)[1]
        self.assertFalse(signer.verify_signature(b"b", bad_sig))

        with self.assertRaises(BadSignature) as cm:
            signer.unsign(bad_signed)

        self.assertEqual(cm.exception.payload, b"b")

    def test_changed_value(self):
        signer = self.signer
        signed = signer.sign("my string")
        signed = signed.replace(b"my", b"other", 1)
        self.assertFalse(signer.validate(signed))

        with self.assertRaises(BadSignature):
            signer.unsign(signed)

    def test_invalid_separator(self):
        with self.assertRaises(ValueError) as cm:
            self.signer_factory(sep="-")

        self.assertIn("separator cannot be used", str(cm.exception))

    def test_key_derivation(self):
        for key_derivation in ("concat", "django-concat", "hmac", "none"):
            with self.subTest(key_derivation=key_derivation):
                signer = self.signer_factory(key_derivation=key_derivation)
                self.assertEqual(signer.unsign(signer.sign("value")), b"value")

    def test_invalid_key_derivation(self):
        signer = self.signer_factory(key_derivation="invalid")

        with self.assertRaises(TypeError):
            signer.derive_key()

    def test_digest_method(self):
        signer = self.signer_factory(digest_method=hashlib.md5)
        self.assertEqual(signer.unsign(signer.sign("value")), b"value")

    def test_algorithm(self):
        for algorithm in (None, NoneAlgorithm(), HMACAlgorithm(), _ReverseAlgorithm()):
            with self.subTest(algorithm=algorithm):
                signer = self.signer_factory(algorithm=algorithm)
                self.assertEqual(signer.unsign(signer.sign("value")), b"value")

                if algorithm is None:
                    self.assertEqual(
                        signer.algorithm.digest_method, signer.digest_method
                    )

    def test_secret_keys(self):
        signer = Signer("a")
        signed = signer.sign("my string")
        self.assertIsInstance(signed, bytes)

        signer = Signer(["a", "b"])
        self.assertTrue(signer.validate(signed))
        out = signer.unsign(signed)
        self.assertEqual(out, b"my string")


class TestSigner(SignerTests, unittest.TestCase):
    pass


class TestSigningAlgorithm(unittest.TestCase):
    def test_abstract_algorithm(self):
        alg = SigningAlgorithm()

        with self.assertRaises(NotImplementedError):
            alg.get_signature(b"a", b"b")
