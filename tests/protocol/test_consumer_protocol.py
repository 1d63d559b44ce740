"""ConsumerProtocolSubscription / ConsumerProtocolAssignment (protocol.md §4)."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from protocol.errors import DecodeError, EncodeError

FULL = ConsumerProtocolSubscription(3, ["orders", "pay"], b"ud", [TopicPartition("orders", [0, 2])], 7, "rack-a")


def test_protocol_md_example() -> None:
    empty = bytes.fromhex("00000000000100017400000000")
    null = bytes.fromhex("000000000001000174ffffffff")
    assert decode_subscription(empty) == ConsumerProtocolSubscription(0, ["t"], b"")
    assert decode_subscription(null) == ConsumerProtocolSubscription(0, ["t"], None)
    assert encode_subscription(ConsumerProtocolSubscription(0, ["t"], None)) == null


def test_librdkafka_style_v3_bytes() -> None:
    raw = b"".join(
        [
            struct.pack(">h", 3),  # Version
            struct.pack(">i", 1),
            b"\x00\x01t",  # Topics ["t"]
            struct.pack(">i", 0),  # UserData: empty, not null
            struct.pack(">i", 0),  # OwnedPartitions: none
            struct.pack(">i", -1),  # GenerationId
            struct.pack(">h", -1),  # RackId: null
        ]
    )
    sub = ConsumerProtocolSubscription(3, ["t"], b"", [], -1, None)
    assert decode_subscription(raw) == sub
    assert encode_subscription(sub) == raw


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_round_trip_and_kafka_python(version: int) -> None:
    sub = ConsumerProtocolSubscription(version, FULL.topics, FULL.user_data)
    if version >= 1:
        sub.owned_partitions = FULL.owned_partitions
    if version >= 2:
        sub.generation_id = 7
    if version >= 3:
        sub.rack_id = "rack-a"
    raw = encode_subscription(sub)
    assert decode_subscription(raw) == sub
    kp = pytest.importorskip("kafka.protocol.consumer.metadata")
    S = kp.ConsumerProtocolSubscription
    owned = [S.TopicPartition(topic=t.topic, partitions=t.partitions) for t in sub.owned_partitions]
    theirs = S(
        topics=sub.topics,
        user_data=sub.user_data,
        owned_partitions=owned,
        generation_id=sub.generation_id,
        rack_id=sub.rack_id,
        version=version,
    ).encode(version=version)
    assert raw == bytes(theirs)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_assignment_round_trip_and_kafka_python(version: int) -> None:
    a = ConsumerProtocolAssignment(version, [TopicPartition("t", [0, 2]), TopicPartition("u", [])], None)
    raw = encode_assignment(a)
    assert decode_assignment(raw) == a
    assert a.partitions() == [("t", 0), ("t", 2)]
    kp = pytest.importorskip("kafka.protocol.consumer.metadata")
    A = kp.ConsumerProtocolAssignment
    assigned = [A.TopicPartition(topic=t.topic, partitions=t.partitions) for t in a.assigned_partitions]
    theirs = A(assigned_partitions=assigned, user_data=None, version=version).encode(version=version)
    assert raw == bytes(theirs)


def test_empty_assignment_bytes() -> None:
    assert decode_assignment(b"") == ConsumerProtocolAssignment()


def test_newer_version_is_read_with_the_v3_layout_and_trailing_bytes_ignored() -> None:
    raw = encode_subscription(FULL)
    v5 = struct.pack(">h", 5) + raw[2:] + b"future fields"
    fields = ("topics", "user_data", "owned_partitions", "generation_id", "rack_id")
    assert decode_subscription(v5) == ConsumerProtocolSubscription(5, *[getattr(FULL, f) for f in fields])
    assert decode_subscription(raw + b"junk") == FULL
    a = encode_assignment(ConsumerProtocolAssignment(1, [TopicPartition("t", [1])], b"u"))
    v9 = struct.pack(">h", 9) + a[2:] + b"\x00\x01"
    assert decode_assignment(v9).assigned_partitions == [TopicPartition("t", [1])]


def test_missing_tail_gets_defaults() -> None:
    v0_body = encode_subscription(ConsumerProtocolSubscription(0, ["t"], None))[2:]
    sub = decode_subscription(struct.pack(">h", 3) + v0_body)
    assert sub == ConsumerProtocolSubscription(3, ["t"], None, [], -1, None)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x00",
        b"\xff\xff" + bytes(8),  # negative version
        b"\x00\x00\xff\xff\xff\xfe" + bytes(4),  # negative topic count
        b"\x00\x00\x00\x00\x00\x01\xff\xfe",  # negative string length
        b"\x00\x00\x00\x00\x00\x01\xff\xff" + bytes(4),  # null topic (not nullable)
        b"\x00\x00\x00\x00\x00\x01\x00\x05ab",  # string past the end
        b"\x00\x00\x7f\xff\xff\xff",  # huge count
        b"\x00\x00\x00\x00\x00\x00\xff\xff\xff\xfe",  # user data length -2
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x09ab",  # user data past the end
    ],
)
def test_malformed_subscription(raw: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_subscription(raw)


def test_truncation_only_raises_decode_error() -> None:
    raw = encode_subscription(FULL)
    for cut in range(len(raw)):
        with contextlib.suppress(DecodeError):
            decode_subscription(raw[:cut])
    a = encode_assignment(ConsumerProtocolAssignment(0, [TopicPartition("t", [1, 2])], b"x"))
    for cut in range(1, len(a)):
        with pytest.raises(DecodeError):
            decode_assignment(a[:cut])


@given(st.binary(max_size=80))
def test_fuzz(raw: bytes) -> None:
    for decode in (decode_subscription, decode_assignment):
        with contextlib.suppress(DecodeError):
            decode(raw)


def test_encode_errors() -> None:
    with pytest.raises(EncodeError):
        encode_subscription(ConsumerProtocolSubscription(-1))
    with pytest.raises(EncodeError):
        encode_subscription(ConsumerProtocolSubscription(0, [None]))  # type: ignore[list-item]


def test_results_are_plain_objects() -> None:
    sub = decode_subscription(encode_subscription(FULL))
    assert type(sub.topics) is list and type(sub.owned_partitions[0]) is TopicPartition
    assert type(sub.owned_partitions[0].partitions) is list
