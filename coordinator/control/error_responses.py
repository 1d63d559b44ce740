"""error_response(api_key, version, request, code): a well-formed error answer for any API.

One builder per API, each copying what Kafka's `<Api>Request.getErrorResponse` builds (apache/kafka
clients/.../common/requests): partition-level codes where the API has partitions (Produce,
Fetch < v13, ListOffsets, OffsetCommit, ...), per-group or per-key entries for batched APIs
(DescribeGroups, DeleteGroups, FindCoordinator v4+, OffsetFetch v8+), the top-level code
elsewhere (the transaction APIs' builders: txn_error_responses.py). Fields a version lacks are
simply not encoded, so one builder serves every version. Produce with acks=0 gets None, as in
Kafka: no response at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coordinator.control import admin_error_responses as admin
from coordinator.control import security_error_responses as security
from coordinator.control import share_error_responses as share
from coordinator.control.txn_error_responses import (
    add_partitions_to_txn_error,
    describe_producers_error,
    describe_transactions_error,
    init_producer_id_error,
    txn_offset_commit_error,
    write_txn_markers_error,
)
from protocol.api import SUPPORTED_VERSIONS, ApiKey
from protocol.errors import ErrorCode
from protocol.messages import (
    add_offsets_to_txn,
    api_versions,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_topics,
    delete_groups,
    delete_topics,
    describe_cluster,
    describe_groups,
    end_txn,
    fetch,
    find_coordinator,
    get_telemetry_subscriptions,
    heartbeat,
    join_group,
    leave_group,
    list_config_resources,
    list_groups,
    list_offsets,
    list_transactions,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    push_telemetry,
    share_acknowledge,
    share_fetch,
    share_group_heartbeat,
    sync_group,
)
from protocol.messages import alter_share_group_offsets as alter_share_offsets
from protocol.messages import delete_share_group_offsets as delete_share_offsets

_Builder = Callable[[int, Any, int, "str | None"], Any]
_AUTHORIZED_OPERATIONS_OMITTED = -(2**31)  # Integer.MIN_VALUE


def error_response(api_key: int, version: int, request: Any, error_code: int, message: str | None = None) -> Any:
    """The response object Kafka would send for `request` failing with `error_code` (None for
    Produce acks=0). `message` goes where the API has an error message field."""
    return _BUILDERS[api_key](version, request, int(error_code), message)


def with_throttle(response: Any, throttle_ms: int) -> Any:
    """Set throttle_time_ms on a response that has it (every API but WriteTxnMarkers)."""
    if response is not None and hasattr(response, "throttle_time_ms"):
        response.throttle_time_ms = throttle_ms
    return response


def _produce(version: int, req: Any, code: int, message: str | None) -> Any:
    if req.acks == 0:
        return None
    m = produce
    return m.ProduceResponse(
        responses=[
            m.TopicProduceResponse(
                name=t.name,
                topic_id=t.topic_id,
                partition_responses=[
                    m.PartitionProduceResponse(
                        index=p.index,
                        error_code=code,
                        base_offset=-1,
                        log_append_time_ms=-1,
                        log_start_offset=-1,
                        record_errors=[],
                        error_message=message,
                    )
                    for p in t.partition_data
                ],
            )
            for t in req.topic_data
        ]
    )


def _fetch(version: int, req: Any, code: int, message: str | None) -> Any:
    # v13+: the top-level code only; before: also every partition (v4-6 have no top-level code).
    m = fetch
    topics = (
        []
        if version >= 13
        else [
            m.FetchableTopicResponse(
                topic=t.topic,
                topic_id=t.topic_id,
                partitions=[
                    m.PartitionData(
                        partition_index=p.partition,
                        error_code=code,
                        high_watermark=-1,
                        aborted_transactions=None,
                        records=b"",
                    )
                    for p in t.partitions
                ],
            )
            for t in req.topics
        ]
    )
    return m.FetchResponse(error_code=code, session_id=req.session_id, responses=topics)


def _list_offsets(version: int, req: Any, code: int, message: str | None) -> Any:
    m = list_offsets
    return m.ListOffsetsResponse(
        topics=[
            m.ListOffsetsTopicResponse(
                name=t.name,
                partitions=[
                    m.ListOffsetsPartitionResponse(
                        partition_index=p.partition_index, error_code=code, timestamp=-1, offset=-1, leader_epoch=-1
                    )
                    for p in t.partitions
                ],
            )
            for t in req.topics
        ]
    )


def _metadata(version: int, req: Any, code: int, message: str | None) -> Any:
    # Kafka answers topic-level codes only: a request for all topics (null) gets no topic at all.
    m = metadata
    return m.MetadataResponse(
        topics=[
            m.MetadataResponseTopic(error_code=code, name=t.name or "", topic_id=t.topic_id, is_internal=False)
            for t in req.topics or ()
        ]
    )


def _offset_commit(version: int, req: Any, code: int, message: str | None) -> Any:
    m = offset_commit
    return m.OffsetCommitResponse(
        topics=[
            m.OffsetCommitResponseTopic(
                name=t.name,
                topic_id=t.topic_id,
                partitions=[
                    m.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=code)
                    for p in t.partitions
                ],
            )
            for t in req.topics
        ]
    )


def _offset_fetch(version: int, req: Any, code: int, message: str | None) -> Any:
    m = offset_fetch
    if version >= 8:
        return m.OffsetFetchResponse(
            groups=[m.OffsetFetchResponseGroup(group_id=g.group_id, error_code=code) for g in req.groups]
        )
    if version >= 2:
        return m.OffsetFetchResponse(error_code=code)
    return m.OffsetFetchResponse(
        topics=[  # v1: no top-level code, so every partition carries it
            m.OffsetFetchResponseTopic(
                name=t.name,
                partitions=[
                    m.OffsetFetchResponsePartition(
                        partition_index=p, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=code
                    )
                    for p in t.partition_indexes
                ],
            )
            for t in req.topics or ()
        ]
    )


def _find_coordinator(version: int, req: Any, code: int, message: str | None) -> Any:
    m = find_coordinator  # Node.noNode(): id -1, host "", port -1
    if version < 4:
        return m.FindCoordinatorResponse(error_code=code, error_message=message, node_id=-1, host="", port=-1)
    return m.FindCoordinatorResponse(
        coordinators=[
            m.Coordinator(key=key, node_id=-1, host="", port=-1, error_code=code, error_message=message)
            for key in req.coordinator_keys
        ]
    )


def _join_group(version: int, req: Any, code: int, message: str | None) -> Any:
    return join_group.JoinGroupResponse(
        error_code=code,
        generation_id=-1,
        leader="",
        member_id="",
        members=[],
        protocol_name=None if version >= 7 else "",
    )


def _describe_groups(version: int, req: Any, code: int, message: str | None) -> Any:
    m = describe_groups
    return m.DescribeGroupsResponse(
        groups=[
            m.DescribedGroup(
                error_code=code,
                error_message=message,
                group_id=g,
                group_state="",
                protocol_type="",
                protocol_data="",
                members=[],
                authorized_operations=_AUTHORIZED_OPERATIONS_OMITTED,
            )
            for g in req.groups
        ]
    )


def _api_versions(version: int, req: Any, code: int, message: str | None) -> Any:
    m = api_versions  # KIP-511: UNSUPPORTED_VERSION lists ApiVersions' own range
    keys = []
    if code == ErrorCode.UNSUPPORTED_VERSION:
        lo, hi = SUPPORTED_VERSIONS[ApiKey.API_VERSIONS]
        keys = [m.ApiVersion(api_key=int(ApiKey.API_VERSIONS), min_version=lo, max_version=hi)]
    return m.ApiVersionsResponse(error_code=code, api_keys=keys)


def _create_topics(version: int, req: Any, code: int, message: str | None) -> Any:
    m = create_topics
    return m.CreateTopicsResponse(
        topics=[
            m.CreatableTopicResult(name=t.name, error_code=code, error_message=message, configs=None)
            for t in req.topics
        ]
    )


def _delete_topics(version: int, req: Any, code: int, message: str | None) -> Any:
    m = delete_topics
    if version >= 6:
        return m.DeleteTopicsResponse(
            responses=[
                m.DeletableTopicResult(name=t.name, topic_id=t.topic_id, error_code=code, error_message=message)
                for t in req.topics
            ]
        )
    return m.DeleteTopicsResponse(
        responses=[
            m.DeletableTopicResult(name=name, error_code=code, error_message=message) for name in req.topic_names
        ]
    )


def _offset_for_leader_epoch(version: int, req: Any, code: int, message: str | None) -> Any:
    m = offset_for_leader_epoch
    return m.OffsetForLeaderEpochResponse(
        topics=[
            m.OffsetForLeaderTopicResult(
                topic=t.topic,
                partitions=[
                    m.EpochEndOffset(error_code=code, partition=p.partition, leader_epoch=-1, end_offset=-1)
                    for p in t.partitions
                ],
            )
            for t in req.topics
        ]
    )


def _delete_groups(version: int, req: Any, code: int, message: str | None) -> Any:
    m = delete_groups
    return m.DeleteGroupsResponse(
        results=[m.DeletableGroupResult(group_id=g, error_code=code) for g in req.groups_names]
    )


def _consumer_group_describe(version: int, req: Any, code: int, message: str | None) -> Any:
    m = consumer_group_describe
    return m.ConsumerGroupDescribeResponse(
        groups=[m.DescribedGroup(error_code=code, error_message=message, group_id=g) for g in req.group_ids]
    )


def _top_level(cls: type, with_message: bool = False) -> _Builder:
    """APIs whose error answer is the top-level code alone (Kafka leaves the other fields default)."""

    def build(version: int, req: Any, code: int, message: str | None) -> Any:
        return cls(error_code=code, error_message=message) if with_message else cls(error_code=code)

    return build


_BUILDERS: dict[int, _Builder] = {
    ApiKey.PRODUCE: _produce,
    ApiKey.FETCH: _fetch,
    ApiKey.LIST_OFFSETS: _list_offsets,
    ApiKey.METADATA: _metadata,
    ApiKey.OFFSET_COMMIT: _offset_commit,
    ApiKey.OFFSET_FETCH: _offset_fetch,
    ApiKey.FIND_COORDINATOR: _find_coordinator,
    ApiKey.JOIN_GROUP: _join_group,
    ApiKey.HEARTBEAT: _top_level(heartbeat.HeartbeatResponse),
    ApiKey.LEAVE_GROUP: _top_level(leave_group.LeaveGroupResponse),
    ApiKey.SYNC_GROUP: _top_level(sync_group.SyncGroupResponse),
    ApiKey.DESCRIBE_GROUPS: _describe_groups,
    ApiKey.LIST_GROUPS: _top_level(list_groups.ListGroupsResponse),
    ApiKey.API_VERSIONS: _api_versions,
    ApiKey.CREATE_TOPICS: _create_topics,
    ApiKey.DELETE_TOPICS: _delete_topics,
    ApiKey.INIT_PRODUCER_ID: init_producer_id_error,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: _offset_for_leader_epoch,
    ApiKey.ADD_PARTITIONS_TO_TXN: add_partitions_to_txn_error,
    ApiKey.ADD_OFFSETS_TO_TXN: _top_level(add_offsets_to_txn.AddOffsetsToTxnResponse),
    ApiKey.END_TXN: _top_level(end_txn.EndTxnResponse),
    ApiKey.WRITE_TXN_MARKERS: write_txn_markers_error,
    ApiKey.TXN_OFFSET_COMMIT: txn_offset_commit_error,
    ApiKey.DELETE_GROUPS: _delete_groups,
    ApiKey.OFFSET_DELETE: _top_level(offset_delete.OffsetDeleteResponse),
    ApiKey.DESCRIBE_CLUSTER: _top_level(describe_cluster.DescribeClusterResponse, with_message=True),
    ApiKey.DESCRIBE_PRODUCERS: describe_producers_error,
    ApiKey.DESCRIBE_TRANSACTIONS: describe_transactions_error,
    ApiKey.LIST_TRANSACTIONS: _top_level(list_transactions.ListTransactionsResponse),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: _top_level(
        consumer_group_heartbeat.ConsumerGroupHeartbeatResponse, with_message=True
    ),
    ApiKey.CONSUMER_GROUP_DESCRIBE: _consumer_group_describe,
    ApiKey.DELETE_RECORDS: admin.delete_records_error,
    ApiKey.DESCRIBE_CONFIGS: admin.describe_configs_error,
    ApiKey.ALTER_CONFIGS: admin.alter_configs_error,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: admin.incremental_alter_configs_error,
    ApiKey.DESCRIBE_LOG_DIRS: admin.describe_log_dirs_error,
    ApiKey.CREATE_PARTITIONS: admin.create_partitions_error,
    ApiKey.ELECT_LEADERS: admin.elect_leaders_error,
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: admin.describe_topic_partitions_error,
    ApiKey.LIST_CONFIG_RESOURCES: _top_level(list_config_resources.ListConfigResourcesResponse),
    ApiKey.GET_TELEMETRY_SUBSCRIPTIONS: _top_level(get_telemetry_subscriptions.GetTelemetrySubscriptionsResponse),
    ApiKey.PUSH_TELEMETRY: _top_level(push_telemetry.PushTelemetryResponse),
    ApiKey.SASL_HANDSHAKE: security.sasl_handshake_error,
    ApiKey.SASL_AUTHENTICATE: security.sasl_authenticate_error,
    ApiKey.DESCRIBE_ACLS: security.describe_acls_error,
    ApiKey.CREATE_ACLS: security.create_acls_error,
    ApiKey.DELETE_ACLS: security.delete_acls_error,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: security.describe_user_scram_credentials_error,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: security.alter_user_scram_credentials_error,
    ApiKey.SHARE_GROUP_HEARTBEAT: _top_level(share_group_heartbeat.ShareGroupHeartbeatResponse),
    ApiKey.SHARE_GROUP_DESCRIBE: share.share_group_describe_error,
    ApiKey.SHARE_FETCH: _top_level(share_fetch.ShareFetchResponse),
    ApiKey.SHARE_ACKNOWLEDGE: _top_level(share_acknowledge.ShareAcknowledgeResponse),
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: share.describe_share_group_offsets_error,
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: _top_level(alter_share_offsets.AlterShareGroupOffsetsResponse, with_message=True),
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: _top_level(
        delete_share_offsets.DeleteShareGroupOffsetsResponse, with_message=True
    ),
}
