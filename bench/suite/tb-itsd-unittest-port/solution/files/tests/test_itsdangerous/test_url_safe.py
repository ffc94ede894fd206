import unittest
from functools import partial

from itsdangerous.url_safe import URLSafeSerializer
from itsdangerous.url_safe import URLSafeTimedSerializer
from test_itsdangerous.test_serializer import SerializerTests
from test_itsdangerous.test_timed import TimedSerializerTests


class URLSafeSerializerTests(SerializerTests):
    # the long value is compressed with zlib
    values = ({"id": 42}, "a" * 1000)

    def serializer_factories(self):
        return [partial(URLSafeSerializer, secret_key="secret-key")]


class TestURLSafeSerializer(URLSafeSerializerTests, unittest.TestCase):
    pass


class TestURLSafeTimedSerializer(
    URLSafeSerializerTests, TimedSerializerTests, unittest.TestCase
):
    def serializer_factories(self):
        return [partial(URLSafeTimedSerializer, secret_key="secret-key")]
