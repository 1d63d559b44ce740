"""The orders the assignors iterate in, fixed so equal inputs give equal outputs.

Kafka's assignors iterate HashSets and HashMaps in a few places, so their results depend on
Java's hash order. Where a Kafka test's expected result depends on that order (the homogeneous
uniform builder's list of unassigned partitions), we reproduce Java's HashSet order for
`Uuid` keys and break its one undefined part (insertion order inside a bucket) by topic id.
Everywhere else topics go in Kafka's `Uuid.compareTo` order and partitions ascending.
"""

from __future__ import annotations

from collections.abc import Iterable

from coordinator.groups.assignors.spec import TopicId

_MASK64 = (1 << 64) - 1
_MASK32 = (1 << 32) - 1


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def uuid_order_key(topic_id: TopicId) -> tuple[int, int]:
    """Kafka `Uuid.compareTo`: most then least significant 64 bits, as *signed* longs."""
    bits = topic_id.int
    return _signed64(bits >> 64), _signed64(bits & _MASK64)


def sorted_topic_ids(topic_ids: Iterable[TopicId]) -> list[TopicId]:
    return sorted(topic_ids, key=uuid_order_key)


def java_uuid_hash(topic_id: TopicId) -> int:
    """Kafka `Uuid.hashCode`, as an unsigned 32-bit value: fold (msb ^ lsb) to 32 bits."""
    bits = topic_id.int
    folded = (bits >> 64) ^ (bits & _MASK64)
    return ((folded >> 32) ^ folded) & _MASK32


def _table_size_for(capacity: int) -> int:
    """java.util.HashMap.tableSizeFor: the smallest power of two >= capacity."""
    size = 1
    while size < capacity:
        size <<= 1
    return size


def java_hash_set_order(topic_ids: Iterable[TopicId]) -> list[TopicId]:
    """The iteration order of `new HashSet<>(topicIds)` in Java (HashSet(Collection) sizes its
    table to max(n / 0.75 + 1, 16) and never resizes). Buckets are `spread(hash) & (size - 1)`;
    inside a bucket Java keeps insertion order, which its source set leaves undefined: we use
    Kafka's Uuid order there."""
    ids = list(topic_ids)
    mask = _table_size_for(max((4 * len(ids)) // 3 + 1, 16)) - 1

    def key(topic_id: TopicId) -> tuple[int, tuple[int, int]]:
        h = java_uuid_hash(topic_id)
        return (h ^ (h >> 16)) & mask, uuid_order_key(topic_id)

    return sorted(ids, key=key)


def java_string_key(value: str) -> bytes:
    """Java `String.compareTo` compares UTF-16 code units; big-endian UTF-16 bytes sort the same."""
    return value.encode("utf-16-be", "surrogatepass")
