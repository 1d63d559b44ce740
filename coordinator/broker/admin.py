"""Creating and deleting topics: the checks Kafka's controller makes, in its order.

CreateTopics (ReplicationControlManager.createTopic on one broker): duplicate names in one
request -> INVALID_REQUEST; bad name -> INVALID_TOPIC_EXCEPTION; existing -> TOPIC_ALREADY_EXISTS;
explicit assignments must use -1/-1 counts and name live brokers, one list length for all
(the replicas are then placed by Kafka's assignment all the same: the lists set the factor);
partitions < 1 -> INVALID_PARTITIONS; beyond kgc's `max.partitions` -> POLICY_VIOLATION (Kafka
has no such cap: it is this server's, checked where Kafka checks a CreateTopicPolicy); a
replication factor below 1 or above the live broker count -> INVALID_REPLICATION_FACTOR (-1 =
default.replication.factor); unknown or bad configs -> INVALID_CONFIG. `validate_only` checks
without creating.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from coordinator.broker.data_path import DataPath
from coordinator.broker.topic_config import TopicConfigError, effective, validate_overrides
from coordinator.broker.topics import InvalidTopicError, Topic, validate_topic_name
from protocol.errors import ErrorCode

DEFAULT = -1  # KIP-464: "use the broker default"


@dataclass(slots=True)
class CreateOutcome:
    error: int = ErrorCode.NONE
    message: str | None = None
    topic: Topic | None = None
    num_partitions: int = -1
    replication_factor: int = -1
    configs: dict[str, tuple[Any, int]] = field(default_factory=dict)


def create_topic(
    data: DataPath,
    name: str,
    num_partitions: int,
    replication_factor: int,
    assignments: list[tuple[int, list[int]]],
    configs: dict[str, str | None],
    validate_only: bool,
    live_brokers: list[int],
) -> CreateOutcome:
    try:
        validate_topic_name(name)
    except InvalidTopicError as exc:
        return CreateOutcome(ErrorCode.INVALID_TOPIC_EXCEPTION, str(exc))
    if data.topics.get(name) is not None:
        return CreateOutcome(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
    if assignments:
        if num_partitions != DEFAULT or replication_factor != DEFAULT:
            return CreateOutcome(
                ErrorCode.INVALID_REQUEST,
                "Both numPartitions or replicationFactor and replicasAssignments were set. "
                "Both cannot be used at the same time.",
            )
        indexes = sorted(index for index, _ in assignments)
        if indexes != list(range(len(assignments))):
            return CreateOutcome(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "partitions must be numbered 0..n-1")
        sizes = {len(brokers) for _, brokers in assignments}
        if len(sizes) != 1 or any(
            b not in live_brokers or brokers.count(b) > 1 for _, brokers in assignments for b in brokers
        ):
            return CreateOutcome(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"each partition needs distinct live brokers (live: {live_brokers}), "
                "the same number for every partition",
            )
        num_partitions, replication_factor = len(assignments), sizes.pop()
    if num_partitions == DEFAULT:
        num_partitions = data.config.num_partitions
    if num_partitions < 1:
        return CreateOutcome(
            ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."
        )
    held = data.topics.user_partitions()
    if held + num_partitions > data.config.max_partitions:
        # kgc's cap (max.partitions), refused as Kafka refuses what a CreateTopicPolicy rejects.
        return CreateOutcome(
            ErrorCode.POLICY_VIOLATION,
            f"{num_partitions} more partitions would make {held + num_partitions} user-topic partitions, more "
            f"than max.partitions={data.config.max_partitions} on this server",
        )
    if replication_factor == DEFAULT:
        replication_factor = data.config.default_replication_factor
    if not 1 <= replication_factor <= len(live_brokers):
        message = (
            "Replication factor must be larger than 0."
            if replication_factor < 1
            else f"Unable to replicate the partition {replication_factor} time(s): The target replication "
            f"factor of {replication_factor} cannot be reached because only {len(live_brokers)} "
            "broker(s) are registered."
        )
        return CreateOutcome(ErrorCode.INVALID_REPLICATION_FACTOR, message)
    try:
        overrides = validate_overrides(configs)
    except TopicConfigError as exc:
        return CreateOutcome(ErrorCode.INVALID_CONFIG, str(exc))
    topic = None if validate_only else data.create_topic(name, num_partitions, overrides, replication_factor)
    return CreateOutcome(
        ErrorCode.NONE, None, topic, num_partitions, replication_factor, effective(overrides, data.config)
    )


def delete_topic(data: DataPath, topic: Topic) -> tuple[int, str | None]:
    if topic.internal:
        return ErrorCode.INVALID_REQUEST, f"internal topic {topic.name} cannot be deleted"
    data.delete_topic(topic.name)
    return ErrorCode.NONE, None
