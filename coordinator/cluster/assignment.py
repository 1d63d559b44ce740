"""Kafka's replica assignment: which brokers hold each partition, the first being the preferred
leader (AdminUtils.assignReplicasToBrokersRackUnaware, no racks).

Kafka picks the start index and the second replica's shift at random; here both come from the
caller (`start`), so a topic's placement is the same on every start of the same cluster (a
deliberate difference: tests get repeatable leaders). Partition p's first replica is broker
(p + start) % N, and each later replica is shifted as Kafka shifts it, so leaders and followers
spread evenly over the brokers.
"""

from __future__ import annotations


def assign_replicas(
    partitions: int, replication_factor: int, brokers: list[int], start: int, first_partition: int = 0
) -> list[tuple[int, ...]]:
    """The replica list of partitions first_partition .. first_partition + partitions - 1."""
    n = len(brokers)
    if not 1 <= replication_factor <= n:
        raise ValueError(f"replication factor {replication_factor} with {n} broker(s)")
    start %= n
    shift = start
    out = []
    for partition in range(first_partition, first_partition + partitions):
        if partition > 0 and partition % n == 0:
            shift += 1
        first = (partition + start) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        out.append(tuple(replicas))
    return out
