"""The group coordinator as handlers see it: one typed method per operation.

Kafka's GroupCoordinatorService: each method finds the group's __consumer_offsets partition
(placement.partition_for), runs the operation on that partition's shard through the runtime,
and turns an unavailable partition into Kafka's answer for the request: COORDINATOR_LOAD_IN_PROGRESS
while it loads, COORDINATOR_NOT_AVAILABLE while it is failed (or its append failed), with the
error on every partition where the API has them. Requests naming several groups (DescribeGroups,
DeleteGroups, OffsetFetch) are split by partition and answered in request order; ListGroups asks
every partition this broker leads and fails as a whole if one cannot answer (Kafka's listGroups).
Each broker of the cluster has its own GroupService bound to its node id: a group whose partition
another broker leads (or none) is answered NOT_COORDINATOR, so clients look the coordinator up.
KIP-848 ConsumerGroupHeartbeat and ConsumerGroupDescribe go through the same helpers; with
"consumer" missing from group.coordinator.rebalance.protocols they answer UNSUPPORTED_VERSION.
The KIP-932 share-group requests go through `share` (share/service.py: the same helpers, with the
share coordinator's calls between operations); DeleteGroups deletes a share group's share-partition
state in the share coordinator before the group (Kafka's deleteShareGroups step).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any, TypeVar

from coordinator.groups import forced
from coordinator.groups.consumer_ops import (
    ConsumerDescribeParams,
    ConsumerHeartbeatParams,
    ConsumerHeartbeatResult,
    DescribedConsumerGroup,
    consumer_group_describe,
    consumer_heartbeat,
    validate_heartbeat,
)
from coordinator.groups.describe import delete_groups, describe_groups, list_groups
from coordinator.groups.group_config import GroupConfig
from coordinator.groups.heartbeat import heartbeat
from coordinator.groups.join import join_group
from coordinator.groups.leave import leave_group
from coordinator.groups.lifecycle import GroupShards
from coordinator.groups.offset_requests import (
    FetchedGroup,
    FetchGroup,
    OffsetCommitParams,
    OffsetCommitResult,
    OffsetDeleteParams,
    OffsetDeleteResult,
    OffsetFetchParams,
)
from coordinator.groups.offsets import commit_error, commit_offsets, delete_offsets, fetch_offsets
from coordinator.groups.placement import OFFSETS_TOPIC, partition_for
from coordinator.groups.requests import (
    DeletedGroup,
    DeleteGroupsParams,
    DescribedGroup,
    DescribeGroupsParams,
    HeartbeatParams,
    HeartbeatResult,
    JoinGroupParams,
    JoinGroupResult,
    LeaveGroupParams,
    LeaveGroupResult,
    ListedGroup,
    ListGroupsParams,
    SyncGroupParams,
    SyncGroupResult,
)
from coordinator.groups.shard import GroupContext, GroupShard
from coordinator.groups.share.describe import DescribedShareGroup
from coordinator.groups.share.heartbeat import ShareHeartbeatParams, ShareHeartbeatResult
from coordinator.groups.share.ops import AlterAnswer, AlterParams
from coordinator.groups.share.service import HighWatermark, OffsetsDeleted, OffsetsGroup, ShareGroupCalls
from coordinator.groups.sync import sync_group
from coordinator.groups.topics_image import TopicsImage
from coordinator.groups.txn_offset_commit import TxnOffsetCommitParams, commit_transactional_offsets
from coordinator.observe.reasons import explain
from coordinator.runtime.coordinator_runtime import CoordinatorRuntime, CoordinatorUnavailable
from coordinator.runtime.leadership import Leaders, not_coordinator
from coordinator.runtime.operation import ParkedReply
from coordinator.share.persister import SharePersister
from coordinator.share.settings import ShareSettings
from protocol.errors import ErrorCode

P = TypeVar("P")
R = TypeVar("R")
Item = TypeVar("Item")
GroupOp = Callable[[GroupContext, P], "R | ParkedReply[R]"]


class GroupService:
    def __init__(
        self,
        runtime: CoordinatorRuntime[GroupShard],
        leaders: Leaders,
        node_id: int,
        share_persister: SharePersister | None = None,
        high_watermark: HighWatermark | None = None,
    ) -> None:
        """`share_persister`: the share coordinator (None: share-partitions are never initialized);
        `high_watermark`: a partition's high watermark, for the lag DescribeShareGroupOffsets v1 shows."""
        self.runtime = runtime
        self.leaders = leaders
        self.node_id = node_id
        self.num_partitions = runtime.num_partitions
        kind = runtime.kind if isinstance(runtime.kind, GroupShards) else None
        self.config = kind.config if kind is not None else GroupConfig()
        share_settings = kind.share if kind is not None else ShareSettings()
        self.share = ShareGroupCalls(self, share_settings, share_persister, high_watermark)

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def _not_here(self, partition: int) -> CoordinatorUnavailable | None:
        return not_coordinator(self.leaders, OFFSETS_TOPIC, partition, self.node_id, "its groups")

    def topics_image(self) -> TopicsImage:
        """The topics as the groups see them now (refreshed from the broker's registry)."""
        kind = self.runtime.kind
        image = kind.topics if isinstance(kind, GroupShards) else TopicsImage()
        image.refresh()
        return image

    def shard_for(self, group_id: str) -> GroupShard | None:
        """The live shard holding the group (None while its partition loads or is failed): for
        reading state outside an operation (tools, tests), never for changing it."""
        return self.runtime.shard(self.partition_for(group_id))

    # -- one group per request ---------------------------------------------------------------
    # An empty group id is INVALID_GROUP_ID before anything else (isGroupIdNotEmpty), except for
    # OffsetCommit and OffsetFetch, which Kafka serves for "" for backward compatibility (only a
    # null id, which the wire cannot carry for them, is refused).
    async def join_group(self, p: JoinGroupParams) -> JoinGroupResult:
        return await self.on_group(p.group_id, join_group, p, lambda e: JoinGroupResult(e, p.member_id))

    async def sync_group(self, p: SyncGroupParams) -> SyncGroupResult:
        return await self.on_group(p.group_id, sync_group, p, SyncGroupResult)

    def heartbeat(self, p: HeartbeatParams) -> Coroutine[Any, Any, HeartbeatResult]:
        # (on_group's coroutine handed back as it is: one coroutine fewer per heartbeat)
        return self.on_group(p.group_id, heartbeat, p, HeartbeatResult)

    async def leave_group(self, p: LeaveGroupParams) -> LeaveGroupResult:
        return await self.on_group(p.group_id, leave_group, p, LeaveGroupResult)

    def commit_offsets(self, p: OffsetCommitParams) -> Coroutine[Any, Any, OffsetCommitResult]:
        return self.on_group(p.group_id, commit_offsets, p, partial(commit_error, p), empty_id_ok=True)

    async def delete_offsets(self, p: OffsetDeleteParams) -> OffsetDeleteResult:
        return await self.on_group(p.group_id, delete_offsets, p, OffsetDeleteResult)

    async def commit_transactional_offsets(self, p: TxnOffsetCommitParams) -> OffsetCommitResult:
        """TxnOffsetCommit: pending in the group's partition until the transaction's marker."""
        return await self.on_group(
            p.group_id,
            commit_transactional_offsets,
            p,
            lambda e: commit_error(OffsetCommitParams(p.group_id, p.topics), e),
        )

    async def consumer_group_heartbeat(self, p: ConsumerHeartbeatParams) -> ConsumerHeartbeatResult:
        """KIP-848; the request is checked before it is routed, as GroupCoordinatorService does."""
        if not self.config.consumer_protocol_enabled:
            return _unsupported(ConsumerHeartbeatResult)
        invalid = validate_heartbeat(self.config, p)
        if invalid is not None:
            return invalid
        return await self.on_group(
            p.group_id, consumer_heartbeat, p, lambda e: ConsumerHeartbeatResult(error_code=e), empty_id_ok=True
        )

    async def share_group_heartbeat(self, p: ShareHeartbeatParams) -> ShareHeartbeatResult:
        """KIP-932; checked before routing, answered once its share-partitions are initialized."""
        return await self.share.heartbeat(p)

    async def share_group_describe(self, group_ids: list[str]) -> list[DescribedShareGroup]:
        return await self.share.describe(group_ids)

    async def describe_share_group_offsets(self, group_id: str, topics: dict[str, list[int]] | None) -> OffsetsGroup:
        return await self.share.describe_offsets(group_id, topics)

    async def alter_share_group_offsets(self, p: AlterParams) -> AlterAnswer:
        return await self.share.alter_offsets(p)

    async def delete_share_group_offsets(self, group_id: str, topic_names: list[str]) -> OffsetsDeleted:
        return await self.share.delete_offsets(group_id, topic_names)

    async def expire_member(self, group_id: str, member_id: str) -> ErrorCode:
        """As if the member's session timed out now (the control plane)."""
        return await self.on_group(group_id, forced.expire_member, (group_id, member_id), lambda e: e)

    async def rebalance(self, group_id: str) -> ErrorCode:
        """Start a rebalance now (the control plane)."""
        return await self.on_group(group_id, forced.rebalance, group_id, lambda e: e)

    async def on_group(
        self,
        group_id: str,
        op: GroupOp[P, R],
        params: P,
        error_result: Callable[[ErrorCode], R],
        *,
        empty_id_ok: bool = False,
    ) -> R:
        if not group_id and not empty_id_ok:
            explain(ErrorCode.INVALID_GROUP_ID, "the group id is empty")
            return error_result(ErrorCode.INVALID_GROUP_ID)
        partition = self.partition_for(group_id)
        try:
            if (elsewhere := self._not_here(partition)) is not None:
                raise elsewhere
            return await self.runtime.run_op(partition, op, params)
        except CoordinatorUnavailable as exc:
            explain(exc.error_code, str(exc))
            return error_result(exc.error_code)

    # -- several groups per request -----------------------------------------------------------
    async def describe_groups(self, p: DescribeGroupsParams) -> list[DescribedGroup]:
        return await self.on_groups(
            p.group_ids,
            str,
            describe_groups,
            lambda ids: dataclasses.replace(p, group_ids=ids),
            lambda gid, e: DescribedGroup(gid, e, "", "", ""),
        )

    async def delete_groups(self, p: DeleteGroupsParams) -> list[DeletedGroup]:
        """Kafka deleteGroups: share groups' share-partition state first; a share group whose state
        could not be deleted (or that has members) keeps its error and is not deleted."""
        refused = await self.share.delete_state(p.group_ids)
        rest = [gid for gid in p.group_ids if gid not in refused]
        deleted = await self.on_groups(
            rest, str, delete_groups, lambda ids: dataclasses.replace(p, group_ids=ids), DeletedGroup
        )
        answers = iter(deleted)
        return [DeletedGroup(gid, refused[gid]) if gid in refused else next(answers) for gid in p.group_ids]

    async def consumer_group_describe(self, group_ids: list[str]) -> list[DescribedConsumerGroup]:
        if not self.config.consumer_protocol_enabled:
            return [_unsupported(partial(DescribedConsumerGroup, gid)) for gid in group_ids]
        return await self.on_groups(
            group_ids,
            str,
            consumer_group_describe,
            ConsumerDescribeParams,
            lambda gid, e: DescribedConsumerGroup(gid, e),
        )

    async def fetch_offsets(self, p: OffsetFetchParams) -> list[FetchedGroup]:
        return await self.on_groups(
            p.groups,
            _group_id,
            fetch_offsets,
            lambda groups: dataclasses.replace(p, groups=groups),
            lambda g, e: FetchedGroup(g.group_id, e),
        )

    async def on_groups(
        self,
        items: list[Item],
        group_id: Callable[[Item], str],
        op: GroupOp[P, list[R]],
        params_for: Callable[[list[Item]], P],
        error_result: Callable[[Item, ErrorCode], R],
    ) -> list[R]:
        """Serve each partition's items in one op; the others get their error; request order."""
        by_partition: dict[int, list[Item]] = {}
        for item in items:
            by_partition.setdefault(self.partition_for(group_id(item)), []).append(item)
        answers: dict[int, list[R]] = {}
        for partition, part_items in by_partition.items():
            try:
                if (elsewhere := self._not_here(partition)) is not None:
                    raise elsewhere
                answers[partition] = await self.runtime.run_op(partition, op, params_for(part_items))
            except CoordinatorUnavailable as exc:
                explain(exc.error_code, str(exc))
                answers[partition] = [error_result(item, exc.error_code) for item in part_items]
        iters = {partition: iter(results) for partition, results in answers.items()}
        return [next(iters[self.partition_for(group_id(item))]) for item in items]

    # -- every partition ----------------------------------------------------------------------
    async def list_groups(self, p: ListGroupsParams) -> tuple[ErrorCode, list[ListedGroup]]:
        """The groups of every partition this broker leads (Kafka: each broker lists the groups
        it coordinates; admin clients ask every broker)."""
        listed: list[ListedGroup] = []
        for partition in range(self.num_partitions):
            if self._not_here(partition) is not None:
                continue
            try:
                listed.extend(await self.runtime.run_op(partition, list_groups, p))
            except CoordinatorUnavailable as exc:
                return exc.error_code, []
        return ErrorCode.NONE, listed


def _group_id(group: FetchGroup) -> str:
    return group.group_id


def _unsupported(result: Callable[..., R]) -> R:
    """KafkaApis: the consumer protocol is not enabled (group.coordinator.rebalance.protocols)."""
    explain(
        ErrorCode.UNSUPPORTED_VERSION,
        "the consumer rebalance protocol is not enabled (group.coordinator.rebalance.protocols has no 'consumer')",
    )
    return result(error_code=ErrorCode.UNSUPPORTED_VERSION)
