import hashlib
import pickle
from functools import partial
import unittest
from io import BytesIO
from io import StringIO
from typing import Any
from typing import cast
from typing import IO
from typing import overload
from typing import Union

from itsdangerous.exc import BadPayload
from itsdangerous.exc import BadSignature
from itsdangerous.serializer import Serializer
from itsdangerous.signer import _lazy_sha1
from itsdangerous.signer import Signer


@overload
def coerce_str(ref: str, s: str) -> str: ...


@overload
def coerce_str(ref: bytes, s: str) -> bytes: ...


def coerce_str(ref: Union[str, bytes], s: str) -> Union[str, bytes]:
    if isinstance(ref, bytes):
        return s.encode("utf8")

    return s


class SerializerTests:
    """Tests shared by every serializer class. Subclasses (that also
    derive from ``unittest.TestCase``) override
    :meth:`serializer_factories` and :attr:`values`.
    """

    #: the values that each test dumps and loads
    values: tuple = ({"id": 42},)

    def serializer_factories(self):
        return [
            partial(Serializer, secret_key="secret_key"),
            partial(Serializer, secret_key="secret_key", serializer=pickle),
        ]

    def cases(self):
        """(factory, value) for every factory and value, for subTest."""
        return [(f, v) for f in self.serializer_factories() for v in self.values]

    def test_serializer(self):
        for factory in self.serializer_factories():
            serializer = factory()

            for value in (None, True, "str", "text", [1, 2, 3], {"id": 42}):
                with self.subTest(factory=factory, value=value):
                    self.assertEqual(serializer.loads(serializer.dumps(value)), value)

    def test_changed_value(self):
        transforms = (
            lambda s: s.upper(),
            lambda s: s + coerce_str(s, "a"),
            lambda s: coerce_str(s, "a") + s[1:],
            lambda s: s.replace(coerce_str(s, "."), coerce_str(s, "")),
        )

        for factory, value in self.cases():
            for i, transform in enumerate(transforms):
                with self.subTest(factory=factory, value=value, transform=i):
                    serializer = factory()
                    signed = serializer.dumps(value)
                    self.assertEqual(serializer.loads(signed), value)
                    changed = transform(signed)

                    with self.assertRaises(BadSignature):
                        serializer.loads(changed)

    def test_bad_signature_exception(self):
        for factory, value in self.cases():
            with self.subTest(factory=factory, value=value):
                serializer = factory()
                bad_signed = serializer.dumps(value)[:-1]

                with self.assertRaises(BadSignature) as cm:
                    serializer.loads(bad_signed)

                payload = cast(bytes, cm.exception.payload)
                self.assertEqual(serializer.load_payload(payload), value)

    def test_bad_payload_exception(self):
        for factory, value in self.cases():
            with self.subTest(factory=factory, value=value):
                serializer = factory()
                original = serializer.dumps(value)
                payload = original.rsplit(coerce_str(original, "."), 1)[0]  # type: ignore
                bad = serializer.make_signer().sign(payload[:-1])

                with self.assertRaises(BadPayload) as cm:
                    serializer.loads(bad)

                self.assertIsNotNone(cm.exception.original_error)

    def test_loads_unsafe(self):
        for factory, value in self.cases():
            with self.subTest(factory=factory, value=value):
                serializer = factory()
                signed = serializer.dumps(value)
                self.assertEqual(serializer.loads_unsafe(signed), (True, value))

                bad_signed = signed[:-1]
                self.assertEqual(serializer.loads_unsafe(bad_signed), (False, value))

                payload = signed.rsplit(coerce_str(signed, "."), 1)[0]  # type: ignore
                bad_payload = serializer.make_signer().sign(payload[:-1])[:-1]
                self.assertEqual(serializer.loads_unsafe(bad_payload), (False, None))

                class BadUnsign(serializer.signer):  # type: ignore
                    def unsign(self, signed_value, *args, **kwargs):
                        try:
                            return super().unsign(signed_value, *args, **kwargs)
                        except BadSignature as e:
                            e.payload = None
                            raise

                serializer.signer = BadUnsign
                self.assertEqual(serializer.loads_unsafe(bad_signed), (False, None))

    def test_file(self):
        for factory, value in self.cases():
            with self.subTest(factory=factory, value=value):
                serializer = factory()
                f = cast(
                    IO,
                    BytesIO()
                    if isinstance(serializer.dumps(value), bytes)
                    else StringIO(),
                )
                serializer.dump(value, f)
                f.seek(0)
                self.assertEqual(serializer.load(f), value)
                f.seek(0)
                self.assertEqual(serializer.load_unsafe(f), (True, value))

    def test_alt_salt(self):
        for factory, value in self.cases():
            with self.subTest(factory=factory, value=value):
                serializer = factory()
                signed = serializer.dumps(value, salt="other")

                with self.assertRaises(BadSignature):
                    serializer.loads(signed)

                self.assertEqual(serializer.loads(signed, salt="other"), value)

    def test_signer_cls(self):
        for factory, value in self.cases():
            with self.subTest(factory=factory, value=value):
                serializer = factory()

                class Other(serializer.signer):  # type: ignore
                    default_key_derivation = "hmac"

                other = factory(signer=Other)
                self.assertEqual(other.loads(other.dumps(value)), value)
                self.assertNotEqual(other.dumps(value), serializer.dumps(value))

    def test_signer_kwargs(self):
        for factory, value in self.cases():
            with self.subTest(factory=factory, value=value):
                serializer = factory()
                other = factory(signer_kwargs={"key_derivation": "hmac"})
                self.assertEqual(other.loads(other.dumps(value)), value)
                self.assertNotEqual(other.dumps("value"), serializer.dumps("value"))

    def test_serializer_kwargs(self):
        for factory in self.serializer_factories():
            with self.subTest(factory=factory):
                serializer = factory(serializer_kwargs={"skipkeys": True})

                try:
                    serializer.serializer.dumps(None, skipkeys=True)
                except TypeError:
                    continue

                self.assertEqual(serializer.loads(serializer.dumps({(): 1})), {})

    def test_fallback_signers(self):
        for factory, value in self.cases():
            with self.subTest(factory=factory, value=value):
                serializer = factory(signer_kwargs={"digest_method": hashlib.sha256})
                signed = serializer.dumps(value)

                fallback_serializer = factory(
                    signer_kwargs={"digest_method": hashlib.sha1},
                    fallback_signers=[{"digest_method": hashlib.sha256}],
                )

                self.assertEqual(fallback_serializer.loads(signed), value)

    def test_iter_unsigners(self):
        for factory in self.serializer_factories():
            with self.subTest(factory=factory):
                serializer = factory()

                class Signer256(serializer.signer):  # type: ignore
                    default_digest_method = hashlib.sha256

                serializer = factory(
                    secret_key="secret_key",
                    fallback_signers=[
                        {"digest_method": hashlib.sha256},
                        (Signer, {"digest_method": hashlib.sha256}),
                        Signer256,
                    ],
                )

                unsigners = serializer.iter_unsigners()
                self.assertEqual(next(unsigners).digest_method, _lazy_sha1)

                for signer in unsigners:
                    self.assertEqual(signer.digest_method, hashlib.sha256)


class TestSerializer(SerializerTests, unittest.TestCase):
    pass


class TestDigests(unittest.TestCase):
    def test_digests(self):
        factory = partial(Serializer, secret_key="dev key", salt="dev salt")
        default_value = factory(signer_kwargs={}).dumps([42])
        sha1_value = factory(signer_kwargs={"digest_method": hashlib.sha1}).dumps([42])
        sha512_value = factory(signer_kwargs={"digest_method": hashlib.sha512}).dumps(
            [42]
        )
        self.assertEqual(default_value, sha1_value)
        self.assertEqual(sha1_value, "[42].-9cNi0CxsSB3hZPNCe9a2eEs1ZM")
        self.assertEqual(
            sha512_value,
            "[42].MKCz_0nXQqv7wKpfHZcRtJRmpT2T5uvs9YQsJEhJimqxc"
            "9bCLxG31QzS5uC8OVBI1i6jyOLAFNoKaF5ckO9L5Q",
        )
