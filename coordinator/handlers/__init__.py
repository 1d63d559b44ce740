"""One thin module per API key; this table maps each served key to its handler's module.

A handler is `async def handle(ctx: RequestContext, request) -> response | None`. It validates,
calls the part of the broker that owns the behaviour, and builds the response object; the
dispatcher does headers, versions and bytes.

A handler's module (with the message module and broker parts only it uses) is imported on the
first request of its key, by `load_handler`, not at start-up: importing all of them delayed the
server's first answer by ~17 ms, and one costs its first request ~1 ms. `HANDLERS` holds the
handlers loaded so far, so the dispatcher's lookup stays one dict.get.
"""

from __future__ import annotations

from importlib import import_module

from coordinator.handlers.request_context import Handler
from protocol.api import ApiKey

# API key -> its module in this package (kNN_<api>.py, NN the key).
HANDLER_MODULES: dict[int, str] = {
    ApiKey.METADATA: "k03_metadata",
    ApiKey.FIND_COORDINATOR: "k10_find_coordinator",
    ApiKey.API_VERSIONS: "k18_api_versions",
    # classic groups
    ApiKey.JOIN_GROUP: "k11_join_group",
    ApiKey.HEARTBEAT: "k12_heartbeat",
    ApiKey.LEAVE_GROUP: "k13_leave_group",
    ApiKey.SYNC_GROUP: "k14_sync_group",
    ApiKey.DESCRIBE_GROUPS: "k15_describe_groups",
    ApiKey.LIST_GROUPS: "k16_list_groups",
    ApiKey.DELETE_GROUPS: "k42_delete_groups",
    # offsets
    ApiKey.OFFSET_COMMIT: "k08_offset_commit",
    ApiKey.OFFSET_FETCH: "k09_offset_fetch",
    ApiKey.OFFSET_DELETE: "k47_offset_delete",
    # consumer groups (KIP-848)
    ApiKey.CONSUMER_GROUP_HEARTBEAT: "k68_consumer_group_heartbeat",
    ApiKey.CONSUMER_GROUP_DESCRIBE: "k69_consumer_group_describe",
    # share groups (KIP-932)
    ApiKey.SHARE_GROUP_HEARTBEAT: "k76_share_group_heartbeat",
    ApiKey.SHARE_GROUP_DESCRIBE: "k77_share_group_describe",
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: "k90_describe_share_group_offsets",
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: "k91_alter_share_group_offsets",
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: "k92_delete_share_group_offsets",
    ApiKey.SHARE_FETCH: "k78_share_fetch",
    ApiKey.SHARE_ACKNOWLEDGE: "k79_share_acknowledge",
    # the data path
    ApiKey.PRODUCE: "k00_produce",
    ApiKey.FETCH: "k01_fetch",
    ApiKey.LIST_OFFSETS: "k02_list_offsets",
    ApiKey.CREATE_TOPICS: "k19_create_topics",
    ApiKey.DELETE_TOPICS: "k20_delete_topics",
    ApiKey.OFFSET_FOR_LEADER_EPOCH: "k23_offset_for_leader_epoch",
    # the admin surface (coordinator/admin)
    ApiKey.DELETE_RECORDS: "k21_delete_records",
    ApiKey.DESCRIBE_CONFIGS: "k32_describe_configs",
    ApiKey.ALTER_CONFIGS: "k33_alter_configs",
    ApiKey.DESCRIBE_LOG_DIRS: "k35_describe_log_dirs",
    ApiKey.CREATE_PARTITIONS: "k37_create_partitions",
    ApiKey.ELECT_LEADERS: "k43_elect_leaders",
    ApiKey.INCREMENTAL_ALTER_CONFIGS: "k44_incremental_alter_configs",
    ApiKey.DESCRIBE_CLUSTER: "k60_describe_cluster",
    ApiKey.DESCRIBE_PRODUCERS: "k61_describe_producers",
    ApiKey.LIST_CONFIG_RESOURCES: "k74_list_config_resources",
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: "k75_describe_topic_partitions",
    # client telemetry (KIP-714, coordinator/telemetry)
    ApiKey.GET_TELEMETRY_SUBSCRIPTIONS: "k71_get_telemetry_subscriptions",
    ApiKey.PUSH_TELEMETRY: "k72_push_telemetry",
    # transactions
    ApiKey.INIT_PRODUCER_ID: "k22_init_producer_id",
    ApiKey.ADD_PARTITIONS_TO_TXN: "k24_add_partitions_to_txn",
    ApiKey.ADD_OFFSETS_TO_TXN: "k25_add_offsets_to_txn",
    ApiKey.END_TXN: "k26_end_txn",
    ApiKey.WRITE_TXN_MARKERS: "k27_write_txn_markers",  # served on the broker link only (cluster/peer_link.py)
    ApiKey.TXN_OFFSET_COMMIT: "k28_txn_offset_commit",
    ApiKey.DESCRIBE_TRANSACTIONS: "k65_describe_transactions",
    ApiKey.LIST_TRANSACTIONS: "k66_list_transactions",
    # security (coordinator/security)
    ApiKey.SASL_HANDSHAKE: "k17_sasl_handshake",
    ApiKey.SASL_AUTHENTICATE: "k36_sasl_authenticate",
    ApiKey.DESCRIBE_ACLS: "k29_describe_acls",
    ApiKey.CREATE_ACLS: "k30_create_acls",
    ApiKey.DELETE_ACLS: "k31_delete_acls",
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: "k50_describe_user_scram_credentials",
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: "k51_alter_user_scram_credentials",
}

HANDLERS: dict[int, Handler] = {}  # the handlers loaded so far, by API key


def load_handler(key: int) -> Handler | None:
    """The handler of API key `key`, its module imported now if it was not yet; None for a key
    that has no handler."""
    handler = HANDLERS.get(key)
    if handler is None:
        module = HANDLER_MODULES.get(key)
        if module is None:
            return None
        handler = HANDLERS[key] = import_module(f"coordinator.handlers.{module}").handle
    return handler
