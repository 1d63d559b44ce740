"""The subscribed-topics hash of a group (KIP-1101, Kafka 4.1+ Utils.computeTopicHash /
computeGroupHash), persisted as ConsumerGroupMetadataValue.MetadataHash.

A topic hashes as XXH3-64 over: magic byte 0, the topic id's two longs, the name, the partition
count, then per partition its index and its sorted racks. Kafka feeds these through hash4j's
HashStream: little-endian ints/longs, strings as UTF-16LE code units followed by their length, a
rack as its length then the string. A group hashes its existing subscribed topics' hashes in
topic-name order; no topics hashes to 0. A changed hash bumps the group epoch (new partitions,
deleted or created topics), so equal inputs must give Kafka's exact value.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

import xxhash

from coordinator.groups.consumer.context import TopicMeta, TopicsView

TOPIC_HASH_MAGIC_BYTE = 0
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= (1 << 63) else value


def _put_string(out: bytearray, s: str) -> None:
    """hash4j putString: the UTF-16 code units, then their count."""
    raw = s.encode("utf-16-le")
    out += raw
    out += _I32.pack(len(raw) // 2)


def topic_hash(topic: TopicMeta) -> int:
    out = bytearray((TOPIC_HASH_MAGIC_BYTE,))
    raw_id = topic.topic_id.bytes
    out += raw_id[7::-1]  # getMostSignificantBits, written little-endian
    out += raw_id[:7:-1]  # getLeastSignificantBits
    _put_string(out, topic.name)
    out += _I32.pack(topic.num_partitions)
    for partition in range(topic.num_partitions):
        out += _I32.pack(partition)
        for rack in sorted(
            topic.partition_racks.get(partition, ()), key=lambda s: s.encode("utf-16-be")
        ):  # Java String order (UTF-16 units)
            out += _I32.pack(len(rack.encode("utf-16-le")) // 2)
            _put_string(out, rack)
    return _signed64(xxhash.xxh3_64_intdigest(bytes(out)))


def group_hash(topic_hashes: dict[str, int]) -> int:
    if not topic_hashes:
        return 0
    data = b"".join(_I64.pack(topic_hashes[name]) for name in sorted(topic_hashes, key=lambda s: s.encode("utf-16-be")))
    return _signed64(xxhash.xxh3_64_intdigest(data))


def metadata_hash(topic_names: Iterable[str], topics: TopicsView) -> int:
    """Kafka ModernGroup.computeMetadataHash: topics that do not exist do not count."""
    hashes = {}
    for name in topic_names:
        topic = topics.by_name(name)
        if topic is not None:
            hashes[name] = topic_hash(topic)
    return group_hash(hashes)
