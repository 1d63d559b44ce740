"""Which __consumer_offsets partition owns a group: Kafka's GroupCoordinatorService.partitionFor.

`Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions`, where hashCode is Java's
String.hashCode (s[0]*31^(n-1) + ... over UTF-16 code units, so a non-BMP character counts as
its two surrogates, wrapping at 32 bits) and Utils.abs maps Integer.MIN_VALUE to 0 (Math.abs
would leave it negative). Only this formula puts groups on the partitions real Kafka uses.
"""

from __future__ import annotations

import struct
from functools import lru_cache

OFFSETS_TOPIC = "__consumer_offsets"
DEFAULT_NUM_PARTITIONS = 50  # offsets.topic.num.partitions
_INT_MIN = -(1 << 31)


def java_string_hash(s: str) -> int:
    """Java's String.hashCode as a signed int32."""
    units = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for (unit,) in struct.iter_unpack(">H", units):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def kafka_abs(n: int) -> int:
    """org.apache.kafka.common.utils.Utils.abs: abs that maps Integer.MIN_VALUE to 0."""
    return 0 if n == _INT_MIN else abs(n)


@lru_cache(maxsize=65536)
def partition_for(group_id: str, num_partitions: int = DEFAULT_NUM_PARTITIONS) -> int:
    if num_partitions <= 0:
        raise ValueError("num_partitions must be positive")
    return kafka_abs(java_string_hash(group_id)) % num_partitions
