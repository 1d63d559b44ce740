"""Requests and results of the offset operations (OffsetCommit, OffsetFetch, OffsetDelete).

Plain dataclasses like messages.py: handlers build `*Params` from the decoded request and turn
the result into the response of the version they speak. Topic existence is checked by the
handler (Kafka's KafkaApis does it before the coordinator sees the request), not here.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple, Protocol

from protocol.errors import ErrorCode

_NO_TOPIC_IDS: Mapping[str, uuid.UUID] = MappingProxyType({})  # an immutable default
NO_GENERATION = -1
DEFAULT_RETENTION_TIME = -1  # Kafka OffsetCommitRequest.DEFAULT_RETENTION_TIME
INVALID_OFFSET = -1  # Kafka OffsetFetchResponse.INVALID_OFFSET


# -- OffsetCommit (8) -----------------------------------------------------------------------


class CommitPartitionLike(Protocol):
    """What a commit reads of each partition. The OffsetCommit handler passes the decoded
    request's partitions (OffsetCommitRequestPartition has these fields) as they are, sparing a
    copy per partition; everyone else builds CommitPartitions."""

    @property
    def partition_index(self) -> int: ...
    @property
    def committed_offset(self) -> int: ...
    @property
    def committed_leader_epoch(self) -> int: ...  # v6+; -1 = unknown
    @property
    def committed_metadata(self) -> str | None: ...


class CommitPartition(NamedTuple):
    """A NamedTuple, not a dataclass: a commit builds one per partition, and a frozen dataclass's
    __init__ costs several times as much. Fields named as the wire's (CommitPartitionLike)."""

    partition_index: int
    committed_offset: int
    committed_leader_epoch: int = -1  # v6+; -1 = unknown
    committed_metadata: str | None = ""

    # The short names TxnOffsetCommit's operation reads.
    @property
    def partition(self) -> int:
        return self.partition_index

    @property
    def offset(self) -> int:
        return self.committed_offset

    @property
    def leader_epoch(self) -> int:
        return self.committed_leader_epoch

    @property
    def metadata(self) -> str | None:
        return self.committed_metadata


class OffsetCommitParams(NamedTuple):
    """A NamedTuple, not a frozen dataclass: as immutable, and cheaper to build once per commit."""

    group_id: str
    topics: Sequence[tuple[str, Sequence[CommitPartitionLike]]]
    generation_id: int = NO_GENERATION
    member_id: str = ""
    group_instance_id: str | None = None
    retention_time_ms: int = DEFAULT_RETENTION_TIME  # v2-4 only
    request_version: int = 9
    # v10: the id the request named each topic by, persisted with its offsets (OffsetCommitValue
    # v4's TopicId) so that a later v10 fetch can tell a recreated topic apart (KAFKA-19154).
    topic_ids: Mapping[str, uuid.UUID] = _NO_TOPIC_IDS


class OffsetCommitResult(NamedTuple):
    """Per partition errors, topics and partitions in request order. `error` is the group-level
    error (every partition carries it too), NONE when the commit was validated."""

    error: ErrorCode
    topics: Sequence[tuple[str, list[tuple[int, ErrorCode]]]] = ()


# -- OffsetFetch (9) ------------------------------------------------------------------------


@dataclass(frozen=True)
class FetchGroup:
    group_id: str
    topics: list[tuple[str, list[int]]] | None  # None = every committed partition (v2+)
    member_id: str | None = None  # v9+: checked against a consumer group's members (KIP-848)
    member_epoch: int = -1  # v9+
    # v10: the id each named topic was asked by; an offset persisted under another id answers -1
    # (Kafka's OffsetMetadataManager.isMismatchedTopicId, KAFKA-19154).
    topic_ids: Mapping[str, uuid.UUID] = field(default_factory=dict)


@dataclass(frozen=True)
class OffsetFetchParams:
    groups: list[FetchGroup]
    require_stable: bool = False  # v7+; no transactions here, so it changes nothing

    @classmethod
    def single(
        cls, group_id: str, topics: list[tuple[str, list[int]]] | None, require_stable: bool = False
    ) -> OffsetFetchParams:
        return cls([FetchGroup(group_id, topics)], require_stable)


@dataclass(frozen=True, slots=True)
class FetchedPartition:
    partition: int
    offset: int = INVALID_OFFSET
    leader_epoch: int = -1
    metadata: str = ""
    error: ErrorCode = ErrorCode.NONE


@dataclass(frozen=True)
class FetchedGroup:
    group_id: str
    error: ErrorCode = ErrorCode.NONE
    topics: list[tuple[str, list[FetchedPartition]]] = field(default_factory=list)


# -- OffsetDelete (47) ----------------------------------------------------------------------


@dataclass(frozen=True)
class OffsetDeleteParams:
    group_id: str
    topics: list[tuple[str, list[int]]]


@dataclass(frozen=True)
class OffsetDeleteResult:
    error: ErrorCode
    topics: list[tuple[str, list[tuple[int, ErrorCode]]]] = field(default_factory=list)
