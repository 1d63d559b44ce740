"""The share-state persister: how share partitions and the group coordinator reach the share
coordinator (Kafka's Persister interface and its Initialize/Read/Write/Delete/ReadSummary
ShareGroupState RPCs, kept in-process: the inter-broker RPCs 83-87 are not served on the wire).

One `SharePartitionKey` (group, topic id, partition) names one share-partition's state. Every
method returns Kafka's error code for the key (NONE on success) as the share coordinator would
answer it: COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR are retried
inside the persister as Kafka's DefaultStatePersister retries them, so callers see them only when
the coordinator stays unavailable; FENCED_STATE_EPOCH, FENCED_LEADER_EPOCH, INVALID_REQUEST (e.g. a
write to a share-partition that was never initialized) and UNKNOWN_TOPIC_OR_PARTITION are final.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import NamedTuple, Protocol

UNINITIALIZED_START_OFFSET = -1  # Kafka PartitionFactory.UNINITIALIZED_START_OFFSET
UNINITIALIZED_DELIVERY_COMPLETE_COUNT = -1  # KIP-1226: not known (written before Kafka 4.2)
DEFAULT_STATE_EPOCH = 0
NO_LEADER_EPOCH = -1

# RecordState ids as persisted (Kafka RecordState): ACQUIRED (1) is never persisted.
AVAILABLE = 0
ACKNOWLEDGED = 2
ARCHIVED = 4


class SharePartitionKey(NamedTuple):
    group_id: str
    topic_id: uuid.UUID
    partition: int


@dataclass(frozen=True, slots=True)
class StateBatch:
    """A run of offsets in one persisted state (Kafka PersisterStateBatch)."""

    first_offset: int
    last_offset: int
    delivery_state: int  # AVAILABLE, ACKNOWLEDGED or ARCHIVED
    delivery_count: int


@dataclass(frozen=True, slots=True)
class ShareState:
    """A share-partition's persisted state as ReadShareGroupState answers it."""

    state_epoch: int
    start_offset: int  # UNINITIALIZED_START_OFFSET: apply share.auto.offset.reset on first use
    leader_epoch: int
    delivery_complete_count: int  # terminal records at or past start_offset (KIP-1226), or -1
    batches: tuple[StateBatch, ...]


@dataclass(frozen=True, slots=True)
class StateSummary:
    """ReadShareGroupStateSummary's answer (DescribeShareGroupOffsets' lag, KIP-1226)."""

    state_epoch: int
    start_offset: int
    leader_epoch: int
    delivery_complete_count: int


class SharePersister(Protocol):
    async def initialize(self, key: SharePartitionKey, state_epoch: int, start_offset: int) -> int:
        """InitializeShareGroupState: (re)start the key's state at `start_offset` (-1: let the
        share partition apply share.auto.offset.reset) with `state_epoch`; an initialize with an
        older state epoch than the stored one is FENCED_STATE_EPOCH."""
        ...

    async def read(self, key: SharePartitionKey, leader_epoch: int) -> tuple[int, ShareState | None]:
        """ReadShareGroupState by the share-partition leader at `leader_epoch` (an older leader
        epoch than the stored one is FENCED_LEADER_EPOCH; a newer one is recorded)."""
        ...

    async def write(
        self,
        key: SharePartitionKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        delivery_complete_count: int,
        batches: tuple[StateBatch, ...],
    ) -> int:
        """WriteShareGroupState: the changed batches (and start offset, -1: unchanged); durable
        when this returns NONE."""
        ...

    async def delete(self, key: SharePartitionKey) -> int:
        """DeleteShareGroupState: forget the key's state (tombstones)."""
        ...

    async def read_summary(self, key: SharePartitionKey, leader_epoch: int) -> tuple[int, StateSummary | None]:
        """ReadShareGroupStateSummary (DescribeShareGroupOffsets)."""
        ...
