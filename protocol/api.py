"""API keys, the ONE table of versions the server advertises, and header-version rules.

`SUPPORTED_VERSIONS` is what ApiVersions advertises: exactly the APIs the server has handlers
for (tests/coordinator/test_dispatch_table.py holds the two together). `CODEC_VERSIONS` is what
the codec can decode and encode (Kafka 4.3's `validVersions` for each message). Every advertised
version must be decodable (tested), with one deliberate exception: Produce is advertised from v0
(KAFKA-18659: librdkafka < 2.11 turns compression off unless Produce v0 is advertised) although
v0-2 were removed in Kafka 4.0 and the server rejects them.
"""

from __future__ import annotations

from enum import IntEnum
from typing import cast


class ApiKey(IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    ELECT_LEADERS = 43
    INCREMENTAL_ALTER_CONFIGS = 44
    OFFSET_DELETE = 47
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    DESCRIBE_CLUSTER = 60
    DESCRIBE_PRODUCERS = 61
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66
    CONSUMER_GROUP_HEARTBEAT = 68
    CONSUMER_GROUP_DESCRIBE = 69
    GET_TELEMETRY_SUBSCRIPTIONS = 71
    PUSH_TELEMETRY = 72
    LIST_CONFIG_RESOURCES = 74
    DESCRIBE_TOPIC_PARTITIONS = 75
    SHARE_GROUP_HEARTBEAT = 76
    SHARE_GROUP_DESCRIBE = 77
    SHARE_FETCH = 78
    SHARE_ACKNOWLEDGE = 79
    DESCRIBE_SHARE_GROUP_OFFSETS = 90
    ALTER_SHARE_GROUP_OFFSETS = 91
    DELETE_SHARE_GROUP_OFFSETS = 92


# The ranges the server advertises in ApiVersions: (min, max), inclusive.
SUPPORTED_VERSIONS: dict[ApiKey, tuple[int, int]] = {
    ApiKey.PRODUCE: (0, 12),  # v0-2 advertised but rejected (KAFKA-18659), see module docstring
    ApiKey.FETCH: (4, 16),
    ApiKey.LIST_OFFSETS: (1, 7),
    ApiKey.METADATA: (0, 12),
    ApiKey.OFFSET_COMMIT: (2, 10),  # v10: topic ids (KAFKA-14690)
    ApiKey.OFFSET_FETCH: (1, 10),  # v10: topic ids (KAFKA-14691)
    ApiKey.FIND_COORDINATOR: (0, 6),
    ApiKey.JOIN_GROUP: (0, 9),
    ApiKey.HEARTBEAT: (0, 4),
    ApiKey.LEAVE_GROUP: (0, 5),
    ApiKey.SYNC_GROUP: (0, 5),
    ApiKey.DESCRIBE_GROUPS: (0, 6),  # v6: GROUP_ID_NOT_FOUND + ErrorMessage (KIP-1043)
    ApiKey.LIST_GROUPS: (0, 5),
    ApiKey.API_VERSIONS: (0, 4),
    ApiKey.CREATE_TOPICS: (2, 7),
    ApiKey.DELETE_TOPICS: (1, 6),
    ApiKey.INIT_PRODUCER_ID: (0, 5),  # v6 (KIP-939 2PC) is not served
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (2, 4),
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 5),  # transactions (coordinator/txn)
    ApiKey.ADD_OFFSETS_TO_TXN: (0, 4),
    ApiKey.END_TXN: (0, 5),  # v5: KIP-890 part 2, an epoch bump per transaction (transaction.version 2)
    ApiKey.TXN_OFFSET_COMMIT: (0, 5),  # v5: the offsets partition joins the transaction (KIP-890 part 2)
    ApiKey.DESCRIBE_TRANSACTIONS: (0, 0),
    ApiKey.LIST_TRANSACTIONS: (0, 2),
    ApiKey.DELETE_GROUPS: (0, 2),
    ApiKey.OFFSET_DELETE: (0, 0),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: (0, 1),  # KIP-848 (coordinator/groups/consumer)
    ApiKey.CONSUMER_GROUP_DESCRIBE: (0, 1),
    # KIP-932 share groups (coordinator/groups/share, coordinator/share): withdrawn from
    # ApiVersions when group.share.enable is off (coordinator/share/wiring.py).
    ApiKey.SHARE_GROUP_HEARTBEAT: (1, 1),
    ApiKey.SHARE_GROUP_DESCRIBE: (1, 1),
    ApiKey.SHARE_FETCH: (1, 2),
    ApiKey.SHARE_ACKNOWLEDGE: (1, 2),
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: (0, 1),
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: (0, 0),
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: (0, 0),
    # The admin surface (coordinator/admin), at Kafka 4.2's ranges.
    ApiKey.DELETE_RECORDS: (0, 2),
    ApiKey.DESCRIBE_CONFIGS: (1, 4),
    ApiKey.ALTER_CONFIGS: (0, 2),
    ApiKey.DESCRIBE_LOG_DIRS: (1, 4),  # v5 (KIP-1066 cordoned dirs) is Kafka 4.3's
    ApiKey.CREATE_PARTITIONS: (0, 3),
    ApiKey.ELECT_LEADERS: (0, 2),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    ApiKey.DESCRIBE_CLUSTER: (0, 2),
    ApiKey.DESCRIBE_PRODUCERS: (0, 0),
    ApiKey.LIST_CONFIG_RESOURCES: (0, 1),
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: (0, 0),
    # KIP-714 client telemetry (coordinator/telemetry). Kafka advertises them only when a
    # telemetry exporter plugin is configured; kgc's built-in receiver always is.
    ApiKey.GET_TELEMETRY_SUBSCRIPTIONS: (0, 0),
    ApiKey.PUSH_TELEMETRY: (0, 0),
    # WriteTxnMarkers (27) is broker to broker: codec only.
    # security (coordinator/security), Kafka 4.2's ranges (DescribeAcls/CreateAcls/DeleteAcls v0
    # were removed in 4.0)
    ApiKey.SASL_HANDSHAKE: (0, 1),
    ApiKey.SASL_AUTHENTICATE: (0, 2),
    ApiKey.DESCRIBE_ACLS: (1, 3),
    ApiKey.CREATE_ACLS: (1, 3),
    ApiKey.DELETE_ACLS: (1, 3),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
}

# What the codec decodes and encodes: Kafka 4.3 `validVersions` (the message JSON files; the
# KIP-848 APIs from their 4.3 ranges). tests/protocol checks this against protocol/messages.
CODEC_VERSIONS: dict[ApiKey, tuple[int, int]] = {
    ApiKey.PRODUCE: (3, 13),
    ApiKey.FETCH: (4, 18),
    ApiKey.LIST_OFFSETS: (1, 11),
    ApiKey.METADATA: (0, 13),
    ApiKey.OFFSET_COMMIT: (2, 10),
    ApiKey.OFFSET_FETCH: (1, 10),
    ApiKey.FIND_COORDINATOR: (0, 6),
    ApiKey.JOIN_GROUP: (0, 9),
    ApiKey.HEARTBEAT: (0, 4),
    ApiKey.LEAVE_GROUP: (0, 5),
    ApiKey.SYNC_GROUP: (0, 5),
    ApiKey.DESCRIBE_GROUPS: (0, 6),
    ApiKey.LIST_GROUPS: (0, 5),
    ApiKey.API_VERSIONS: (0, 4),
    ApiKey.CREATE_TOPICS: (2, 7),
    ApiKey.DELETE_TOPICS: (1, 6),
    ApiKey.INIT_PRODUCER_ID: (0, 6),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (2, 4),
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 5),
    ApiKey.ADD_OFFSETS_TO_TXN: (0, 4),
    ApiKey.END_TXN: (0, 5),
    ApiKey.WRITE_TXN_MARKERS: (1, 2),
    ApiKey.TXN_OFFSET_COMMIT: (0, 5),
    ApiKey.DELETE_GROUPS: (0, 2),
    ApiKey.OFFSET_DELETE: (0, 0),
    ApiKey.DESCRIBE_CLUSTER: (0, 2),
    ApiKey.DESCRIBE_PRODUCERS: (0, 0),
    ApiKey.DESCRIBE_TRANSACTIONS: (0, 0),
    ApiKey.LIST_TRANSACTIONS: (0, 2),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: (0, 1),
    ApiKey.CONSUMER_GROUP_DESCRIBE: (0, 1),
    # Kafka 4.3's vendored JSON (kafka-python) for admin and security.
    ApiKey.DELETE_RECORDS: (0, 2),
    ApiKey.DESCRIBE_CONFIGS: (1, 4),
    ApiKey.ALTER_CONFIGS: (0, 2),
    ApiKey.DESCRIBE_LOG_DIRS: (1, 5),
    ApiKey.CREATE_PARTITIONS: (0, 3),
    ApiKey.ELECT_LEADERS: (0, 2),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    ApiKey.LIST_CONFIG_RESOURCES: (0, 1),
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: (0, 0),
    ApiKey.SASL_HANDSHAKE: (0, 1),
    ApiKey.SASL_AUTHENTICATE: (0, 2),
    ApiKey.DESCRIBE_ACLS: (1, 3),
    ApiKey.CREATE_ACLS: (1, 3),
    ApiKey.DELETE_ACLS: (1, 3),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
    # KIP-714 client telemetry.
    ApiKey.GET_TELEMETRY_SUBSCRIPTIONS: (0, 0),
    ApiKey.PUSH_TELEMETRY: (0, 0),
    # KIP-932 share groups, at Kafka 4.2's versions (v0 of the first four was 4.0's early access,
    # removed in 4.1; ShareFetch/ShareAcknowledge v2 are KIP-1206/KIP-1222, DescribeShareGroupOffsets
    # v1 KIP-1226): protocol/tools/schemas.
    ApiKey.SHARE_GROUP_HEARTBEAT: (1, 1),
    ApiKey.SHARE_GROUP_DESCRIBE: (1, 1),
    ApiKey.SHARE_FETCH: (1, 2),
    ApiKey.SHARE_ACKNOWLEDGE: (1, 2),
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: (0, 1),
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: (0, 0),
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: (0, 0),
}

# Module name under protocol.messages for each API.
MODULE_NAMES: dict[ApiKey, str] = {
    ApiKey.PRODUCE: "produce",
    ApiKey.FETCH: "fetch",
    ApiKey.LIST_OFFSETS: "list_offsets",
    ApiKey.METADATA: "metadata",
    ApiKey.OFFSET_COMMIT: "offset_commit",
    ApiKey.OFFSET_FETCH: "offset_fetch",
    ApiKey.FIND_COORDINATOR: "find_coordinator",
    ApiKey.JOIN_GROUP: "join_group",
    ApiKey.HEARTBEAT: "heartbeat",
    ApiKey.LEAVE_GROUP: "leave_group",
    ApiKey.SYNC_GROUP: "sync_group",
    ApiKey.DESCRIBE_GROUPS: "describe_groups",
    ApiKey.LIST_GROUPS: "list_groups",
    ApiKey.API_VERSIONS: "api_versions",
    ApiKey.CREATE_TOPICS: "create_topics",
    ApiKey.DELETE_TOPICS: "delete_topics",
    ApiKey.INIT_PRODUCER_ID: "init_producer_id",
    ApiKey.OFFSET_FOR_LEADER_EPOCH: "offset_for_leader_epoch",
    ApiKey.ADD_PARTITIONS_TO_TXN: "add_partitions_to_txn",
    ApiKey.ADD_OFFSETS_TO_TXN: "add_offsets_to_txn",
    ApiKey.END_TXN: "end_txn",
    ApiKey.WRITE_TXN_MARKERS: "write_txn_markers",
    ApiKey.TXN_OFFSET_COMMIT: "txn_offset_commit",
    ApiKey.DELETE_GROUPS: "delete_groups",
    ApiKey.OFFSET_DELETE: "offset_delete",
    ApiKey.DESCRIBE_CLUSTER: "describe_cluster",
    ApiKey.DESCRIBE_PRODUCERS: "describe_producers",
    ApiKey.DESCRIBE_TRANSACTIONS: "describe_transactions",
    ApiKey.LIST_TRANSACTIONS: "list_transactions",
    ApiKey.CONSUMER_GROUP_HEARTBEAT: "consumer_group_heartbeat",
    ApiKey.CONSUMER_GROUP_DESCRIBE: "consumer_group_describe",
    ApiKey.DELETE_RECORDS: "delete_records",
    ApiKey.DESCRIBE_CONFIGS: "describe_configs",
    ApiKey.ALTER_CONFIGS: "alter_configs",
    ApiKey.DESCRIBE_LOG_DIRS: "describe_log_dirs",
    ApiKey.CREATE_PARTITIONS: "create_partitions",
    ApiKey.ELECT_LEADERS: "elect_leaders",
    ApiKey.INCREMENTAL_ALTER_CONFIGS: "incremental_alter_configs",
    ApiKey.LIST_CONFIG_RESOURCES: "list_config_resources",
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: "describe_topic_partitions",
    ApiKey.SASL_HANDSHAKE: "sasl_handshake",
    ApiKey.SASL_AUTHENTICATE: "sasl_authenticate",
    ApiKey.DESCRIBE_ACLS: "describe_acls",
    ApiKey.CREATE_ACLS: "create_acls",
    ApiKey.DELETE_ACLS: "delete_acls",
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: "describe_user_scram_credentials",
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: "alter_user_scram_credentials",
    ApiKey.GET_TELEMETRY_SUBSCRIPTIONS: "get_telemetry_subscriptions",
    ApiKey.PUSH_TELEMETRY: "push_telemetry",
    ApiKey.SHARE_GROUP_HEARTBEAT: "share_group_heartbeat",
    ApiKey.SHARE_GROUP_DESCRIBE: "share_group_describe",
    ApiKey.SHARE_FETCH: "share_fetch",
    ApiKey.SHARE_ACKNOWLEDGE: "share_acknowledge",
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: "describe_share_group_offsets",
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: "alter_share_group_offsets",
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: "delete_share_group_offsets",
}

# First flexible version of every API in Kafka 4.3's message JSON (None = never flexible), also
# for APIs without a codec here, so that the request header of ANY known API decodes with the
# right header version and the server can answer or close cleanly.
FIRST_FLEXIBLE_VERSION: dict[int, int | None] = {
    0: 9,
    1: 12,
    2: 6,
    3: 9,
    8: 8,
    9: 6,
    10: 3,
    11: 6,
    12: 4,
    13: 4,
    14: 4,
    15: 5,
    16: 3,
    17: None,
    18: 3,
    19: 5,
    20: 4,
    21: 2,
    22: 2,
    23: 4,
    24: 3,
    25: 3,
    26: 3,
    27: 1,
    28: 3,
    29: 2,
    30: 2,
    31: 2,
    32: 4,
    33: 2,
    34: 2,
    35: 2,
    36: 2,
    37: 2,
    42: 2,
    43: 2,
    44: 1,
    45: 0,
    46: 0,
    47: None,
    48: 1,
    49: 1,
    50: 0,
    51: 0,
    55: 0,
    57: 0,
    60: 0,
    61: 0,
    65: 0,
    66: 0,
    68: 0,
    69: 0,
    71: 0,
    72: 0,
    74: 0,
    75: 0,
    76: 0,
    77: 0,
    78: 0,
    79: 0,
    90: 0,
    91: 0,
    92: 0,
}


def is_flexible(api_key: int, version: int) -> bool:
    """True iff `version` of `api_key` uses the flexible (compact, tagged) encodings.

    Unknown API keys are treated as not flexible (request header v1)."""
    first = FIRST_FLEXIBLE_VERSION.get(api_key)
    return first is not None and version >= first


def is_supported(api_key: int, version: int) -> bool:
    """True iff the server advertises `version` of `api_key` (see SUPPORTED_VERSIONS)."""
    # ApiKey is an IntEnum (it hashes and compares as its int), so an int looks it up.
    rng = cast("dict[int, tuple[int, int]]", SUPPORTED_VERSIONS).get(api_key)
    return rng is not None and rng[0] <= version <= rng[1]


_API_NAMES: dict[int, str] = {int(k): "".join(part.capitalize() for part in k.name.split("_")) for k in ApiKey}


def api_name(key: int) -> str:
    """`JoinGroup` for 11: Kafka's CamelCase API names (unknown keys: `Api<key>`). A dict lookup:
    the transcript and the control plane name every request."""
    name = _API_NAMES.get(key)
    return name if name is not None else f"Api{key}"
