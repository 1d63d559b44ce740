"""Shared builders for the offset tests: consumer-protocol subscriptions and commit requests."""

from coordinator.groups.offset_requests import CommitPartition, OffsetCommitParams
from protocol.consumer_protocol import ConsumerProtocolSubscription, encode_subscription


def consumer_protocols(*topics: str) -> list[tuple[str, bytes]]:
    return [("range", encode_subscription(ConsumerProtocolSubscription(version=0, topics=list(topics))))]


def commit(
    group_id: str = "g",
    topic: str = "t",
    offsets: dict[int, int] | None = None,
    *,
    generation: int = -1,
    member: str = "",
    instance: str | None = None,
    metadata: str | None = "",
    epoch: int = -1,
    retention: int = -1,
    version: int = 9,
) -> OffsetCommitParams:
    parts = [CommitPartition(n, off, epoch, metadata) for n, off in (offsets or {0: 10}).items()]
    return OffsetCommitParams(group_id, [(topic, parts)], generation, member, instance, retention, version)
