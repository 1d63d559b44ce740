"""What ApiVersions advertises beyond protocol/api.py's table: the features (v3+, KIP-584), one
row per feature, and which APIs are withdrawn when they are not served (`served_versions`).

Each row is (name, supported min, supported max, finalized level), the level Kafka 4.2 finalizes
for what kgc serves. A feature whose finalized level is 0 is listed as supported only (Kafka
leaves level-0 features out of FinalizedFeatures). A row says what the broker *does*: raise a
level only together with the behaviour it turns on in clients (e.g. transaction.version 2 makes
clients send EndTxn v5, share.version 1 lets them use share groups). Light on purpose: `kgc
serve` answers ApiVersions from these tables before the server is imported (net/early_answers.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple


class Feature(NamedTuple):
    name: str
    min_version: int
    max_version: int
    finalized: int


# KIP-890 part 2 (coordinator/txn): every EndTxn v5 bumps the epoch, Produce v12 and
# TxnOffsetCommit v5 add their partition to the transaction; __transaction_state values are
# written at v1 (TransactionVersion TV_2, Kafka 4.2's default).
TRANSACTION_VERSION = 2

# Kafka 4.2's MetadataVersion IBP_4_2_IV1 is feature level 29; 7 is IBP_3_3_IV3, the oldest Kafka 4 reads.
FEATURES: tuple[Feature, ...] = (
    Feature("metadata.version", 7, 29, 29),
    Feature("transaction.version", 0, 2, TRANSACTION_VERSION),
    # KIP-848: the consumer rebalance protocol. GV_1 is still the newest level in Kafka 4.3: its
    # later group APIs (OffsetCommit/OffsetFetch v10, ListGroups v5, DescribeGroups v6) and the
    # KIP-1251 assignment epochs need no new level (a tagged field old coordinators skip).
    Feature("group.version", 0, 1, 1),
    Feature("share.version", 0, 1, 1),  # KIP-932: share groups (finalized 0 when group.share.enable is off)
)


def advertised(share_enabled: bool) -> tuple[Feature, ...]:
    """The rows as ApiVersions lists them now: share.version is finalized only while share groups
    are served (Kafka's isShareGroupProtocolEnabled: group.share.enable or share.version >= 1)."""
    if share_enabled:
        return FEATURES
    return tuple(f._replace(finalized=0) if f.name == "share.version" else f for f in FEATURES)


# Kafka's finalized-features epoch is the metadata offset they were read at; ours never changes
# while a process runs, so any non-negative constant is a valid epoch.
FINALIZED_FEATURES_EPOCH = 1


# ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge,
# Describe/Alter/DeleteShareGroupOffsets.
SHARE_API_KEYS = frozenset({76, 77, 78, 79, 90, 91, 92})


def served_versions(table: Mapping[Any, tuple[int, int]], share_enabled: bool) -> dict[int, tuple[int, int]]:
    """The one place that withdraws the share APIs from ApiVersions when share groups are not
    served (group.share.enable off, or --processes: coordinator/share/wiring.py)."""
    return {int(k): v for k, v in table.items() if share_enabled or int(k) not in SHARE_API_KEYS}
