"""KIP-1101 metadata hash (Kafka Utils.computeTopicHash / computeGroupHash): the byte stream
hash4j feeds XXH3-64, written out by hand here, and the properties the epoch bumps rely on."""

from __future__ import annotations

import struct
import uuid

import xxhash

from coordinator.groups.consumer.context import TopicMeta
from coordinator.groups.consumer.metadata_hash import group_hash, metadata_hash, topic_hash
from tests.coordinator.groups.consumer.harness import FakeTopics

TOPIC_ID = uuid.UUID("0123456789abcdef0011223344556677")


def signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def hash4j_string(s: str) -> bytes:
    return s.encode("utf-16-le") + struct.pack("<i", len(s))


def test_topic_hash_is_xxh3_of_the_hash4j_stream() -> None:
    meta = TopicMeta(TOPIC_ID, "foo", 2, {0: ("rack1", "rack0"), 1: ("rack2", "rack1")})
    stream = (
        b"\x00"
        + struct.pack("<q", 0x0123456789ABCDEF)
        + struct.pack("<q", 0x0011223344556677)
        + hash4j_string("foo")
        + struct.pack("<i", 2)
        + struct.pack("<i", 0)
        + struct.pack("<i", 5)
        + hash4j_string("rack0")
        + struct.pack("<i", 5)
        + hash4j_string("rack1")
        + struct.pack("<i", 1)
        + struct.pack("<i", 5)
        + hash4j_string("rack1")
        + struct.pack("<i", 5)
        + hash4j_string("rack2")
    )
    assert topic_hash(meta) == signed(xxhash.xxh3_64_intdigest(stream))


def test_group_hash_sorts_by_topic_name() -> None:
    assert group_hash({}) == 0
    expected = signed(xxhash.xxh3_64_intdigest(struct.pack("<q", 123) + struct.pack("<q", 456)))
    assert group_hash({"bar": 123, "foo": 456}) == group_hash({"foo": 456, "bar": 123}) == expected
    assert group_hash({"bar": 456, "foo": 123}) != expected


def test_metadata_hash_tracks_what_matters() -> None:
    topics = FakeTopics()
    topics.add("foo", 3)
    base = metadata_hash(["foo", "missing"], topics)
    assert base == metadata_hash(["foo"], topics) != 0  # topics that do not exist do not count
    assert metadata_hash([], topics) == 0
    topics.resize("foo", 4)
    assert metadata_hash(["foo"], topics) != base
    racked = TopicMeta(uuid.UUID(int=1), "foo", 3, {0: ("a",)})
    plain = TopicMeta(uuid.UUID(int=1), "foo", 3)
    other_id = TopicMeta(uuid.UUID(int=2), "foo", 3)
    assert len({topic_hash(racked), topic_hash(plain), topic_hash(other_id)}) == 3
