"""The share-group requests as GroupService serves them: operations on the group's partition with
the share coordinator's calls (the SharePersister) between them, as Kafka's
GroupCoordinatorService does (shareGroupHeartbeat + persisterInitialize, alter/delete/describe
share-group offsets, the share step of deleteGroups).

kgc's deliberate difference: a heartbeat that makes share-partitions initializing is answered
*after* the share coordinator initialized them (and after the member's assignment was recomputed
with them), where Kafka answers first and initializes in the background. A share consumer's first
ShareFetch therefore never finds its partitions uninitialized, and tests see the assignment in
the first answer. A persister error leaves the partitions uninitialized (Kafka's
uninitializeShareGroupState); the next heartbeat tries again. Without a persister (no share
coordinator wired) nothing is ever initialized, so members get no partitions.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from coordinator.groups.consumer.errors import ConsumerGroupError
from coordinator.groups.share import ops
from coordinator.groups.share.describe import DescribedShareGroup
from coordinator.groups.share.heartbeat import ShareHeartbeatParams, ShareHeartbeatResult, validate
from coordinator.groups.share.state_partitions import StateInit, TopicPartitionMap
from coordinator.observe.reasons import explain
from coordinator.share.persister import (
    UNINITIALIZED_DELIVERY_COMPLETE_COUNT,
    UNINITIALIZED_START_OFFSET,
    SharePartitionKey,
    SharePersister,
)
from coordinator.share.settings import ShareSettings
from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from coordinator.groups.service import GroupService

HighWatermark = Callable[[str, int], "int | None"]  # (topic, partition) -> high watermark, None: no log here
DEFAULT_LEADER_EPOCH = 0  # Kafka PartitionFactory.DEFAULT_LEADER_EPOCH
UNINITIALIZED_LAG = -1  # Kafka PartitionFactory.UNINITIALIZED_LAG
MAX_INITIALIZE_ROUNDS = 2


@dataclass(frozen=True)
class OffsetRow:
    """One partition of a DescribeShareGroupOffsets answer."""

    partition: int
    start_offset: int = UNINITIALIZED_START_OFFSET
    leader_epoch: int = DEFAULT_LEADER_EPOCH
    lag: int = UNINITIALIZED_LAG
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True)
class OffsetsTopic:
    topic_name: str
    topic_id: uuid.UUID
    partitions: list[OffsetRow]


@dataclass(frozen=True)
class OffsetsGroup:
    group_id: str
    topics: list[OffsetsTopic] = field(default_factory=list)
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True)
class DeletedTopic:
    topic_name: str | None
    topic_id: uuid.UUID | None
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True)
class OffsetsDeleted:
    error_code: int = 0
    error_message: str | None = None
    topics: list[DeletedTopic] = field(default_factory=list)


class ShareGroupCalls:
    def __init__(
        self,
        groups: GroupService,
        settings: ShareSettings,
        persister: SharePersister | None = None,
        high_watermark: HighWatermark | None = None,
    ) -> None:
        self.groups = groups
        self.settings = settings
        self.persister = persister
        self.high_watermark = high_watermark

    # -- ShareGroupHeartbeat -----------------------------------------------------------------------

    async def heartbeat(self, p: ShareHeartbeatParams) -> ShareHeartbeatResult:
        try:
            validate(p)
        except ConsumerGroupError as exc:
            explain(exc.code, exc.message)
            return ShareHeartbeatResult(error_code=exc.code, error_message=exc.message)
        result, init = await self._heartbeat(p)
        rounds = 0
        while init is not None and rounds < MAX_INITIALIZE_ROUNDS and not result.error_code:
            rounds += 1
            if not await self._initialize(init):
                break
            # The member's assignment with the partitions just initialized (Kafka's next heartbeat).
            again, init = await self._heartbeat(dataclasses.replace(p, member_epoch=result.member_epoch))
            if again.error_code:
                break
            result = dataclasses.replace(again, send_assignment=again.send_assignment or result.send_assignment)
        return result

    async def _heartbeat(self, p: ShareHeartbeatParams) -> tuple[ShareHeartbeatResult, StateInit | None]:
        answer: tuple[ShareHeartbeatResult, StateInit | None] = await self.groups.on_group(
            p.group_id, ops.heartbeat, p, lambda e: (ShareHeartbeatResult(error_code=e), None), empty_id_ok=True
        )
        return answer

    async def _initialize(self, init: StateInit) -> bool:
        """Kafka persisterInitialize + handlePersisterInitializeResponse: any error leaves all of
        the request's partitions uninitialized; True when they were all initialized."""
        error = ErrorCode.COORDINATOR_NOT_AVAILABLE if self.persister is None else ErrorCode.NONE
        if self.persister is not None:
            for topic_id, offsets in init.offsets.items():
                for partition, start_offset in sorted(offsets.items()):
                    key = SharePartitionKey(init.group_id, topic_id, partition)
                    code = ErrorCode(await self.persister.initialize(key, init.state_epoch, start_offset))
                    if code and not error:
                        error = code
        change = ops.StateChange(init.group_id, init.partitions())
        if error:
            explain(error, f"share group {init.group_id}: the share coordinator could not initialize its partitions")
            await self.groups.on_group(init.group_id, ops.mark_uninitialized, change, lambda e: None)
            return False
        await self.groups.on_group(init.group_id, ops.mark_initialized, change, lambda e: None)
        return True

    # -- ShareGroupDescribe ------------------------------------------------------------------------

    async def describe(self, group_ids: list[str]) -> list[DescribedShareGroup]:
        return await self.groups.on_groups(
            group_ids, str, ops.describe, list, lambda gid, e: DescribedShareGroup(gid, e)
        )

    # -- DeleteGroups: the share coordinator's state first --------------------------------------------

    async def delete_state(self, group_ids: list[str]) -> dict[str, ErrorCode]:
        """Kafka deleteShareGroups: each share group's share-partition state is deleted in the
        share coordinator before the group itself; returns the groups that must not be deleted
        (NON_EMPTY_GROUP, or the persister's error)."""
        requests = await self.groups.on_groups(group_ids, str, ops.delete_requests, list, lambda gid, e: e)
        errors: dict[str, ErrorCode] = {}
        for group_id, request in zip(group_ids, requests):
            if isinstance(request, ErrorCode):
                if request:
                    errors[group_id] = request
            elif request:
                code = await self._delete(group_id, request)
                if code:
                    errors[group_id] = code
        return errors

    async def _delete(self, group_id: str, partitions: TopicPartitionMap) -> ErrorCode:
        """The first error of the persister's deletes (Kafka persisterDeleteToGroupIdErrorMap)."""
        if self.persister is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = ErrorCode.NONE
        for topic_id, parts in partitions.items():
            for partition in sorted(parts):
                code = ErrorCode(await self.persister.delete(SharePartitionKey(group_id, topic_id, partition)))
                if code and not error:
                    explain(code, f"share group {group_id}: deleting the state of {topic_id}-{partition} failed")
                    error = code
        return error

    # -- AlterShareGroupOffsets ---------------------------------------------------------------------

    async def alter_offsets(self, p: ops.AlterParams) -> ops.AlterAnswer:
        """Kafka alterShareGroupOffsets + persisterInitialize: re-initialize each partition at its
        new start offset; on a persister error the partitions' answers carry it and they stay
        initializing (Kafka does not uninitialize them)."""
        answer: ops.AlterAnswer = await self.groups.on_group(p.group_id, ops.alter_offsets, p, ops.AlterAnswer)
        init = answer.init
        if answer.error_code or init is None or not init.offsets:
            return answer
        errors: dict[tuple[uuid.UUID, int], ErrorCode] = {}
        for topic_id, offsets in init.offsets.items():
            for partition, start_offset in sorted(offsets.items()):
                key = SharePartitionKey(p.group_id, topic_id, partition)
                if self.persister is None:
                    errors[(topic_id, partition)] = ErrorCode.COORDINATOR_NOT_AVAILABLE
                    continue
                code = ErrorCode(await self.persister.initialize(key, init.state_epoch, start_offset))
                if code:
                    errors[(topic_id, partition)] = code
        if not errors:
            await self.groups.on_group(
                p.group_id, ops.mark_initialized, ops.StateChange(p.group_id, init.partitions()), lambda e: None
            )
            return answer
        topics = []
        for topic in answer.topics:
            parts = dict(topic.partitions)
            for partition, (answered, _) in topic.partitions.items():
                error = errors.get((topic.topic_id, partition)) if topic.topic_id is not None else None
                if not answered and error:
                    parts[partition] = (error, None)
            topics.append(dataclasses.replace(topic, partitions=parts))
        return dataclasses.replace(answer, topics=topics)

    # -- DeleteShareGroupOffsets -----------------------------------------------------------------------

    async def delete_offsets(self, group_id: str, topic_names: list[str]) -> OffsetsDeleted:
        """Kafka deleteShareGroupOffsets: move the topics to deleting, delete their state in the
        share coordinator, and drop the topics that are gone from deleting."""
        answer: ops.OffsetsDeleteAnswer = await self.groups.on_group(
            group_id, ops.start_offsets_delete, (group_id, topic_names), ops.OffsetsDeleteAnswer
        )
        if answer.error_code:
            return OffsetsDeleted(answer.error_code, answer.error_message)
        failed = [DeletedTopic(e.topic_name, None, e.error_code, e.error_message) for e in answer.errors]
        done: list[uuid.UUID] = []
        for topic_id, parts in answer.delete.items():
            code = await self._delete(group_id, {topic_id: parts})
            if code:
                failed.append(DeletedTopic(self._topic_name(group_id, topic_id), topic_id, code, None))
            else:
                done.append(topic_id)
        if done:
            await self.groups.on_group(group_id, ops.finish_offsets_delete, (group_id, done), lambda e: None)
        succeeded = [DeletedTopic(self._topic_name(group_id, t), t) for t in done]
        return OffsetsDeleted(topics=succeeded + failed)

    def _topic_name(self, group_id: str, topic_id: uuid.UUID) -> str | None:
        shard = self.groups.shard_for(group_id)
        meta = None if shard is None else shard.topics.by_id(topic_id)
        return None if meta is None else meta.name

    # -- DescribeShareGroupOffsets ----------------------------------------------------------------------

    async def describe_offsets(self, group_id: str, topics: Mapping[str, list[int]] | None) -> OffsetsGroup:
        """Kafka describeShareGroupOffsets / describeShareGroupAllOffsets: the start offset of each
        share-partition from the share coordinator's summary (-1 when it has none), and (v1,
        KIP-1226) its lag, the high watermark - start offset - delivery-complete count."""
        image = self.groups.topics_image()
        if topics is None:
            initialized: TopicPartitionMap | ErrorCode = await self.groups.on_group(
                group_id, ops.initialized_partitions, group_id, lambda e: e
            )
            if isinstance(initialized, ErrorCode):
                return OffsetsGroup(group_id, error_code=initialized)
            wanted = {}
            for topic_id, parts in initialized.items():
                meta = image.by_id(topic_id)
                if meta is not None:
                    wanted[meta.name] = sorted(parts)
        else:
            wanted = dict(topics)
        out: list[OffsetsTopic] = []
        for name, partitions in wanted.items():
            meta = image.by_name(name)
            if meta is None:  # treated as no offset, not an error (Kafka, as OffsetFetch does)
                out.append(OffsetsTopic(name, uuid.UUID(int=0), [OffsetRow(p) for p in partitions]))
                continue
            rows = [await self._offset_row(group_id, meta.topic_id, name, p) for p in partitions]
            out.append(OffsetsTopic(name, meta.topic_id, rows))
        return OffsetsGroup(group_id, out)

    async def _offset_row(self, group_id: str, topic_id: uuid.UUID, topic: str, partition: int) -> OffsetRow:
        if self.persister is None:
            return OffsetRow(partition)
        code, summary = await self.persister.read_summary(SharePartitionKey(group_id, topic_id, partition), -1)
        if code or summary is None:
            return OffsetRow(partition)
        row = OffsetRow(partition, summary.start_offset, summary.leader_epoch)
        if (
            summary.start_offset == UNINITIALIZED_START_OFFSET
            or summary.delivery_complete_count == UNINITIALIZED_DELIVERY_COMPLETE_COUNT
        ):
            return row
        end = None if self.high_watermark is None else self.high_watermark(topic, partition)
        if end is None:  # Kafka: the failed ListOffsets lookup's error, on this partition only
            return OffsetRow(partition, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return dataclasses.replace(row, lag=end - summary.start_offset - summary.delivery_complete_count)


__all__ = ["HighWatermark", "ShareGroupCalls"]
