"""CreatePartitions: growing a topic, with the checks Kafka's controller makes, in its order
(ReplicationControlManager.createPartitions).

Unknown topic -> UNKNOWN_TOPIC_OR_PARTITION; the same count -> INVALID_PARTITIONS "Topic already
has N partition(s)."; fewer -> INVALID_PARTITIONS "... would not be an increase."; explicit
assignments must number the new partitions and hold the topic's replication factor of distinct
live brokers (INVALID_REPLICA_ASSIGNMENT); past kgc's max.partitions -> POLICY_VIOLATION (as
CreateTopics). kgc refuses to grow its internal topics (their partition count places groups and
transactional ids; Kafka would let an admin break that) with POLICY_VIOLATION. The new partitions'
replicas and leaders are placed by Kafka's assignment, continuing the topic's (cluster.py), as
CreateTopics places them: explicit assignments are checked, then set nothing else (as there).
Groups follow on their own: classic consumers see the count in Metadata and rejoin, consumer
groups (KIP-848) compute a new target assignment on their next heartbeat (topics_image.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from coordinator.broker.data_path import DataPath
from coordinator.broker.topics import InvalidTopicError
from protocol.errors import ErrorCode


def create_partitions(
    data: DataPath,
    name: str,
    count: int,
    assignments: Sequence[Sequence[int]] | None,
    validate_only: bool,
    live_brokers: Sequence[int],
) -> tuple[int, str | None]:
    """(error, message) for one topic of a CreatePartitions request; grows it unless
    `validate_only` or an error."""
    topic = data.topics.get(name)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."
    if topic.internal:
        return (
            ErrorCode.POLICY_VIOLATION,
            f"{name} is internal to kgc's coordinators: its partition count is the setting that places their keys",
        )
    current = topic.partitions
    if count == current:
        return ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s)."
    if count < current:
        return (
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {name} currently has {current} partition(s); {count} would not be an increase.",
        )
    additional = count - current
    if assignments is not None:
        if len(assignments) != additional:
            return (
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Attempted to add {additional} additional partition(s), but only {len(assignments)} "
                "assignment(s) were specified.",
            )
        for replicas in assignments:
            error = _check_assignment(replicas, topic.replication_factor, live_brokers)
            if error is not None:
                return ErrorCode.INVALID_REPLICA_ASSIGNMENT, error
    held = data.topics.user_partitions()
    if held + additional > data.config.max_partitions:
        return (
            ErrorCode.POLICY_VIOLATION,
            f"{additional} more partitions would make {held + additional} user-topic partitions, more than "
            f"max.partitions={data.config.max_partitions} on this server",
        )
    if not validate_only:
        try:
            data.grow_topic(name, count)
        except KeyError:  # cluster.processes: another process deleted it meanwhile
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."
        except InvalidTopicError:  # cluster.processes: another process grew it meanwhile
            return ErrorCode.INVALID_PARTITIONS, f"Topic {name} already has {count} or more partitions."
        except OSError as exc:  # the dirs made so far are completed at the next start (topics.py)
            return ErrorCode.KAFKA_STORAGE_ERROR, f"the new partitions could not be made durable: {exc}"
    return ErrorCode.NONE, None


def _check_assignment(replicas: Sequence[int], factor: int, live: Sequence[int]) -> str | None:
    """ReplicationControlManager.validateManualPartitionAssignment's messages."""
    if not replicas:
        return "The manual partition assignment includes an empty replica list."
    seen: set[int] = set()
    for broker in replicas:
        if broker in seen:
            return f"The manual partition assignment includes the broker {broker} more than once."
        seen.add(broker)
        if broker not in live:
            return f"The manual partition assignment includes broker {broker}, but no such broker is registered."
    if len(replicas) != factor:
        return (
            f"The manual partition assignment includes a partition with {len(replicas)} replica(s), but this is "
            f"not consistent with previous partitions, which have {factor} replica(s)."
        )
    return None
