"""Building the share side of every broker: one share-partition manager and service per broker,
over the broker's logs, the share coordinator (the persister) and the server's share settings.

Share groups are served when group.share.enable is true (Kafka 4.2: the share.version feature),
not in `--processes` mode (a share-partition's state and its log would live in different
processes). `served_versions` is the one place that withdraws the share APIs from ApiVersions
when they are not served.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coordinator.runtime.clock import TimerClock
from coordinator.share.fetch import BrokerLogs
from coordinator.share.manager import SharePartitionManager
from coordinator.share.persister import SharePersister
from coordinator.share.service import ShareService
from coordinator.share.settings import GroupOverrides, ShareSettings

# ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge,
# Describe/Alter/DeleteShareGroupOffsets.
SHARE_API_KEYS = frozenset({76, 77, 78, 79, 90, 91, 92})


def served_versions(table: Mapping[Any, tuple[int, int]], share_enabled: bool) -> dict[int, tuple[int, int]]:
    return {int(k): v for k, v in table.items() if share_enabled or int(k) not in SHARE_API_KEYS}


def share_services(
    node_ids: list[int],
    topics: Any,
    cluster: Any,
    data: Any,
    persister: SharePersister,
    settings: ShareSettings,
    group_configs: GroupOverrides | None,
    clock: TimerClock,
) -> dict[int, ShareService]:
    logs = BrokerLogs(topics, cluster, data)
    return {
        node_id: ShareService(SharePartitionManager(node_id, logs, persister, settings, group_configs, clock))
        for node_id in node_ids
    }
