"""Which partitions a group request names really exist: the check KafkaApis makes for
OffsetCommit and OffsetDelete before the group coordinator sees the rest (each unknown topic or
partition is answered UNKNOWN_TOPIC_OR_PARTITION on its own, the others go on).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from coordinator.broker.topics import TopicRegistry
from coordinator.observe.reasons import explain
from protocol.errors import ErrorCode


class _Partition(Protocol):
    @property
    def partition_index(self) -> int: ...


P = TypeVar("P", bound=_Partition)


def split_known(registry: TopicRegistry, name: str, partitions: Sequence[P]) -> tuple[list[P], list[int]]:
    """(the partitions of topic `name` that exist, the indexes of those that do not, each
    explained), in request order."""
    topic = registry.get(name)
    known: list[P] = []
    unknown: list[int] = []
    for p in partitions:
        if topic is None or not 0 <= p.partition_index < topic.partitions:
            explain(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                f"topic {name!r} " + ("does not exist" if topic is None else f"has no partition {p.partition_index}"),
            )
            unknown.append(p.partition_index)
        else:
            known.append(p)
    return known, unknown
