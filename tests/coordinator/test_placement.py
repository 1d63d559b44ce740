"""Group placement must match Kafka's partitionFor exactly (values below are Java's
String.hashCode results, computed by hand from the UTF-16 code units)."""

import pytest

from coordinator.groups.placement import java_string_hash, kafka_abs, partition_for


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", 0),
        ("a", 97),
        ("hello", 99162322),
        ("ab", 97 * 31 + 98),
        ("é", 233),  # BMP, non-ASCII: one code unit, not its two UTF-8 bytes
        ("日本", 0x65E5 * 31 + 0x672C),
        ("😀", 0xD83D * 31 + 0xDE00),  # U+1F600 = surrogate pair D83D DE00
        ("a😀", ((97 * 31 + 0xD83D) * 31 + 0xDE00)),
        ("polygenelubricants", -(1 << 31)),  # Integer.MIN_VALUE
    ],
)
def test_java_string_hash(text, expected):
    assert java_string_hash(text) == expected


def test_overflow_wraps_like_int32():
    # "hellohello": 99162322 * 31**5 + 99162322, reduced to a signed 32-bit int.
    raw = (99162322 * 31**5 + 99162322) & 0xFFFFFFFF
    assert java_string_hash("hellohello") == (raw - (1 << 32) if raw >= 1 << 31 else raw)


def test_kafka_abs_maps_min_value_to_zero():
    assert kafka_abs(-(1 << 31)) == 0
    assert kafka_abs(-5) == 5
    assert kafka_abs(7) == 7


@pytest.mark.parametrize(
    "group, n, expected",
    [
        ("hello", 50, 99162322 % 50),
        ("ab", 50, 3105 % 50),
        ("polygenelubricants", 50, 0),
        ("polygenelubricants", 7, 0),
        ("😀", 50, (0xD83D * 31 + 0xDE00) % 50),
        ("hello", 1, 0),
    ],
)
def test_partition_for(group, n, expected):
    assert partition_for(group, n) == expected


def test_default_is_50_partitions():
    assert partition_for("hello") == 99162322 % 50


def test_bad_partition_count():
    with pytest.raises(ValueError):
        partition_for("g", 0)
