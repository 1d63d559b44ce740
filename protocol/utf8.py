"""Strings decode as Kafka decodes them: UTF-8 where malformed input never fails.

Kafka reads every protocol string with `new String(bytes, StandardCharsets.UTF_8)`
(org.apache.kafka.common.protocol.Readable.readString), and java.lang.String replaces each
malformed sequence with one U+FFFD instead of throwing. So a name with invalid UTF-8 reaches
the broker's validation (and gets Kafka's error code or answer) rather than closing the
connection. `decode()` does the same; the generated codecs decode strictly first (the fast path)
and fall back to `ERRORS` only when that fails.

How many U+FFFD: Java's decoder (String.decodeUTF8_UTF16 in JDK 17/21) and Python's "replace"
both replace each *maximal subpart* of an ill-formed sequence (Unicode 3.9, "U+FFFD
substitution of maximal subparts") with one U+FFFD. They differ in one place only: an encoded
surrogate, ED followed by A0..BF. Python stops at ED (A0..BF is not a valid second byte after
ED) and replaces ED, A0 and the third byte separately; Java reads the whole 3-byte form (or the
2-byte prefix when the third byte is missing or not a continuation byte) and replaces it once.
`_java_replace` applies Java's rule there and Python's everywhere else (the two are checked
against a model of Java's decoder, byte for byte, in tests/protocol/test_utf8.py).
"""

from __future__ import annotations

import codecs

# The name of the error handler (codecs.register_error) that replaces malformed input as Java.
ERRORS = "kafka-java-replace"
REPLACEMENT = "\ufffd"


def _is_continuation(b: int) -> bool:
    return 0x80 <= b <= 0xBF


def _java_replace(exc: UnicodeError) -> tuple[str, int]:
    """Replace the malformed sequence at `exc.start` with one U+FFFD and resume where Java
    resumes (see the module docstring)."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    raw, start = exc.object, exc.start
    if raw[start] == 0xED and start + 1 < len(raw) and 0xA0 <= raw[start + 1] <= 0xBF:
        # An encoded surrogate: one U+FFFD for ED xx yy (or ED xx when yy is absent or not a
        # continuation byte), where Python would write two or three.
        if start + 2 < len(raw) and _is_continuation(raw[start + 2]):
            return REPLACEMENT, start + 3
        return REPLACEMENT, start + 2
    return REPLACEMENT, exc.end


codecs.register_error(ERRORS, _java_replace)


def decode(raw: bytes | bytearray | memoryview) -> str:
    """UTF-8 `raw` as java.lang.String decodes it: never fails, malformed input -> U+FFFD."""
    return bytes(raw).decode("utf-8", ERRORS)
