"""One thin module per API key; this table maps each served key to its handler.

A handler is `async def handle(ctx: RequestContext, request) -> response | None`. It validates,
calls the part of the broker that owns the behaviour, and builds the response object; the
dispatcher does headers, versions and bytes.
"""

from __future__ import annotations

from coordinator.handlers import (  # classic groups  # offsets  # the data path
    k00_produce,
    k01_fetch,
    k02_list_offsets,
    k03_metadata,
    k08_offset_commit,
    k09_offset_fetch,
    k10_find_coordinator,
    k11_join_group,
    k12_heartbeat,
    k13_leave_group,
    k14_sync_group,
    k15_describe_groups,
    k16_list_groups,
    k18_api_versions,
    k19_create_topics,
    k20_delete_topics,
    k22_init_producer_id,
    k23_offset_for_leader_epoch,
    k24_add_partitions_to_txn,
    k25_add_offsets_to_txn,
    k26_end_txn,
    k28_txn_offset_commit,
    k42_delete_groups,
    k47_offset_delete,
    k65_describe_transactions,
    k66_list_transactions,
    k68_consumer_group_heartbeat,
    k69_consumer_group_describe,
)
from coordinator.handlers.request_context import Handler
from protocol.api import ApiKey

HANDLERS: dict[int, Handler] = {
    ApiKey.METADATA: k03_metadata.handle,
    ApiKey.FIND_COORDINATOR: k10_find_coordinator.handle,
    ApiKey.API_VERSIONS: k18_api_versions.handle,
    ApiKey.JOIN_GROUP: k11_join_group.handle,
    ApiKey.HEARTBEAT: k12_heartbeat.handle,
    ApiKey.LEAVE_GROUP: k13_leave_group.handle,
    ApiKey.SYNC_GROUP: k14_sync_group.handle,
    ApiKey.DESCRIBE_GROUPS: k15_describe_groups.handle,
    ApiKey.LIST_GROUPS: k16_list_groups.handle,
    ApiKey.DELETE_GROUPS: k42_delete_groups.handle,
    ApiKey.OFFSET_COMMIT: k08_offset_commit.handle,
    ApiKey.OFFSET_FETCH: k09_offset_fetch.handle,
    ApiKey.OFFSET_DELETE: k47_offset_delete.handle,
    ApiKey.CONSUMER_GROUP_HEARTBEAT: k68_consumer_group_heartbeat.handle,
    ApiKey.CONSUMER_GROUP_DESCRIBE: k69_consumer_group_describe.handle,
    ApiKey.PRODUCE: k00_produce.handle,
    ApiKey.FETCH: k01_fetch.handle,
    ApiKey.LIST_OFFSETS: k02_list_offsets.handle,
    ApiKey.CREATE_TOPICS: k19_create_topics.handle,
    ApiKey.DELETE_TOPICS: k20_delete_topics.handle,
    ApiKey.INIT_PRODUCER_ID: k22_init_producer_id.handle,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: k23_offset_for_leader_epoch.handle,
    ApiKey.ADD_PARTITIONS_TO_TXN: k24_add_partitions_to_txn.handle,
    ApiKey.ADD_OFFSETS_TO_TXN: k25_add_offsets_to_txn.handle,
    ApiKey.END_TXN: k26_end_txn.handle,
    ApiKey.TXN_OFFSET_COMMIT: k28_txn_offset_commit.handle,
    ApiKey.DESCRIBE_TRANSACTIONS: k65_describe_transactions.handle,
    ApiKey.LIST_TRANSACTIONS: k66_list_transactions.handle,
}
