import ast
import hashlib
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, "/app/src")

from itsdangerous import (  # noqa: E402
    BadPayload,
    BadSignature,
    BadTimeSignature,
    Serializer,
    SignatureExpired,
    Signer,
    TimedSerializer,
    TimestampSigner,
    URLSafeSerializer,
    URLSafeTimedSerializer,
)

T0 = 1_300_000_000.0
PKG = "/app/src/itsdangerous"


def at(offset):
    return mock.patch("time.time", return_value=T0 + offset)


class BehaviourTest(unittest.TestCase):
    def test_roundtrip_all(self):
        for cls in (Serializer, URLSafeSerializer, TimedSerializer, URLSafeTimedSerializer):
            with self.subTest(cls=cls.__name__):
                s = cls("k", salt="s")
                self.assertEqual(s.loads(s.dumps({"a": [1, 2]})), {"a": [1, 2]})
                with self.assertRaises(BadSignature):
                    s.loads(s.dumps(1)[:-1])
                with self.assertRaises(BadSignature):
                    s.loads(s.dumps(1), salt="other")

    def test_key_rotation(self):
        for cls in (Serializer, TimedSerializer):
            with self.subTest(cls=cls.__name__):
                old = cls("old").dumps("v")
                self.assertEqual(cls(["old", "new"]).loads(old), "v")
                with self.assertRaises(BadSignature):
                    cls(["newer", "new"]).loads(old)

    def test_fallback_signers(self):
        for cls in (Serializer, URLSafeSerializer, TimedSerializer, URLSafeTimedSerializer):
            with self.subTest(cls=cls.__name__):
                tok = cls("k", signer_kwargs={"digest_method": hashlib.sha256}).dumps("v")
                s = cls("k", fallback_signers=[{"digest_method": hashlib.sha256}])
                self.assertEqual(s.loads(tok), "v")
                self.assertEqual(cls("k").loads_unsafe(tok), (False, "v"))

    def test_last_error_raised(self):
        s = Serializer("k", fallback_signers=[{"digest_method": hashlib.sha256}])
        with self.assertRaises(BadSignature) as cm:
            s.loads('"v".AAAA')
        self.assertEqual(cm.exception.payload, b'"v"')
        ts = TimedSerializer("k", fallback_signers=[{"digest_method": hashlib.sha256}])
        with at(0):
            tok = ts.dumps("v")
        with self.assertRaises(BadTimeSignature):
            ts.loads(tok[:-2])

    def test_bad_payload_propagates(self):
        for cls in (Serializer, TimedSerializer):
            with self.subTest(cls=cls.__name__):
                s = cls("k", fallback_signers=[{"digest_method": hashlib.sha256}])
                bad = s.make_signer().sign(b"{not json")
                with self.assertRaises(BadPayload):
                    s.loads(bad)

    def test_expired_not_retried(self):
        for cls in (TimedSerializer, URLSafeTimedSerializer):
            with self.subTest(cls=cls.__name__):
                s = cls("k", fallback_signers=[{"digest_method": hashlib.sha256}, {"key_derivation": "hmac"}])
                with at(0):
                    tok = s.dumps({"x": 1})
                with at(5):
                    self.assertEqual(s.loads(tok, max_age=10), {"x": 1})
                    payload, ts = s.loads(tok, max_age=10, return_timestamp=True)
                    self.assertEqual((payload, ts.timestamp()), ({"x": 1}, T0))
                with at(11):
                    with self.assertRaises(SignatureExpired) as cm:
                        s.loads(tok, max_age=10)
                    self.assertEqual(cm.exception.date_signed.timestamp(), T0)
                    self.assertEqual(s.loads_unsafe(tok, max_age=10), (False, {"x": 1}))

    def test_expired_with_fallback_signature(self):
        s = TimedSerializer("k", fallback_signers=[{"digest_method": hashlib.sha256}])
        with at(0):
            tok = TimedSerializer("k", signer_kwargs={"digest_method": hashlib.sha256}).dumps("v")
        with at(100):
            with self.assertRaises(SignatureExpired):
                s.loads(tok, max_age=10)
            self.assertEqual(s.loads(tok), "v")

    def test_signer_classes(self):
        s = Serializer("k", signer=TimestampSigner)
        self.assertEqual(s.loads(s.dumps("v")), "v")
        t = TimedSerializer("k", fallback_signers=[(TimestampSigner, {"digest_method": hashlib.md5})])
        tok = TimedSerializer("k", signer_kwargs={"digest_method": hashlib.md5}).dumps("v")
        self.assertEqual(t.loads(tok), "v")
        self.assertIsInstance(next(Serializer("k").iter_unsigners()), Signer)


class StructureTest(unittest.TestCase):
    def test_single_unsigner_loop(self):
        calls = []
        for fname in ("serializer.py", "timed.py", "url_safe.py"):
            with open(os.path.join(PKG, fname)) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "iter_unsigners"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "self"
                ):
                    calls.append((fname, node.lineno))
        self.assertLessEqual(len(calls), 1, "iter_unsigners is still looped over in several places: %r" % calls)

    def test_timed_loads_has_no_own_loop(self):
        with open(os.path.join(PKG, "timed.py")) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == "TimedSerializer":
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "loads":
                        loops = [n for n in ast.walk(item) if isinstance(n, (ast.For, ast.While))]
                        self.assertEqual(loops, [])


if __name__ == "__main__":
    unittest.main()
