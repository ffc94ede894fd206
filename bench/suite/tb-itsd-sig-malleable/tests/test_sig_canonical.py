import hashlib
import sys
import unittest

sys.path.insert(0, "/app/src")

from itsdangerous import (  # noqa: E402
    BadSignature,
    Serializer,
    Signer,
    TimedSerializer,
    TimestampSigner,
    URLSafeSerializer,
    URLSafeTimedSerializer,
)
from itsdangerous.encoding import base64_decode  # noqa: E402

ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def same_decoding_variants(sig):
    return [
        sig[:-1] + bytes([c])
        for c in ALPHABET
        if c != sig[-1] and base64_decode(sig[:-1] + bytes([c])) == base64_decode(sig)
    ]


def tampered(sig):
    out = [sig + b"=", sig + b"==", sig[:-3] + "\u2603".encode() + sig[-3:], "é".encode() + sig]
    out += same_decoding_variants(sig)
    return out


class CanonicalSignatureTest(unittest.TestCase):
    def test_signers(self):
        signers = [
            Signer("k"),
            Signer("k", digest_method=hashlib.sha256),
            Signer(["old", "k"]),
            TimestampSigner("k"),
        ]
        for signer in signers:
            signed = signer.sign("my string")
            self.assertEqual(signer.unsign(signed), b"my string")
            value, sig = signed.rsplit(b".", 1)
            self.assertTrue(signer.verify_signature(value, sig))
            variants = tampered(sig)
            self.assertGreater(len(variants), 4)
            for bad in variants:
                with self.subTest(signer=type(signer).__name__, bad=bad):
                    self.assertFalse(signer.validate(value + b"." + bad))
                    with self.assertRaises(BadSignature):
                        signer.unsign(value + b"." + bad)
                    # str input too
                    with self.assertRaises(BadSignature):
                        signer.unsign((value + b"." + bad).decode("utf-8"))

    def test_old_key_still_verifies(self):
        tok = Signer("old").sign("v")
        self.assertEqual(Signer(["old", "new"]).unsign(tok), b"v")
        self.assertEqual(Signer(["old", "new"]).unsign(tok.decode()), b"v")

    def test_serializers(self):
        for cls in (Serializer, URLSafeSerializer, TimedSerializer, URLSafeTimedSerializer):
            s = cls("k", salt="reset")
            tok = s.dumps({"user": 5})
            self.assertEqual(s.loads(tok), {"user": 5})
            value, sig = tok.encode().rsplit(b".", 1)
            for bad in tampered(sig):
                with self.subTest(cls=cls.__name__, bad=bad):
                    with self.assertRaises(BadSignature):
                        s.loads((value + b"." + bad).decode("utf-8"))
                    self.assertEqual(s.loads_unsafe((value + b"." + bad).decode("utf-8"))[0], False)

    def test_wrong_signature_still_rejected(self):
        signer = Signer("k")
        value, sig = signer.sign("a").rsplit(b".", 1)
        self.assertFalse(signer.verify_signature(b"b", sig))
        self.assertFalse(signer.verify_signature(value, b""))
        self.assertFalse(signer.verify_signature(value, b"!!!!"))


if __name__ == "__main__":
    unittest.main()
