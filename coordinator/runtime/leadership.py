"""Who coordinates a partition of an internal topic: the broker that leads it (coordinator/cluster
answers `Leaders.leader`). A service of any coordinator (groups, transactions) asks
`not_coordinator` before running an op; the answer is Kafka's NOT_COORDINATOR with where the
partition is led, so the client looks the coordinator up again (FindCoordinator).
"""

from __future__ import annotations

from typing import Protocol

from coordinator.runtime.coordinator_runtime import CoordinatorUnavailable
from protocol.errors import ErrorCode


class Leaders(Protocol):
    def leader(self, topic_name: str, partition: int) -> int: ...


def not_coordinator(
    leaders: Leaders, topic: str, partition: int, node_id: int, coordinates: str
) -> CoordinatorUnavailable | None:
    """None when `node_id` leads `topic`'s `partition`, else NOT_COORDINATOR naming the leader;
    `coordinates` says what the partition holds ("its groups", "its transactional ids")."""
    leader = leaders.leader(topic, partition)
    if leader == node_id:
        return None
    where = f"broker {leader}" if leader >= 0 else "no broker (the partition has no leader)"
    return CoordinatorUnavailable(
        topic, partition, ErrorCode.NOT_COORDINATOR, f"this is broker {node_id}; {where} coordinates {coordinates}"
    )
