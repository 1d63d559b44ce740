"""Building the share side of every broker: one share-partition manager and service per broker,
over the broker's logs, the share coordinator (the persister) and the server's share settings.

Share groups are served when group.share.enable is true (Kafka 4.2: the share.version feature),
not in `--processes` mode (a share-partition's state and its log would live in different
processes). `served_versions` (coordinator/cluster/features.py, light for the early ApiVersions
answer) is the one place that withdraws the share APIs from ApiVersions when they are not served.
"""

from __future__ import annotations

from typing import Any

from coordinator.cluster.features import SHARE_API_KEYS, served_versions
from coordinator.runtime.clock import TimerClock
from coordinator.share.fetch import BrokerLogs
from coordinator.share.manager import SharePartitionManager
from coordinator.share.persister import SharePersister
from coordinator.share.service import ShareService
from coordinator.share.settings import GroupOverrides, ShareSettings

__all__ = ["SHARE_API_KEYS", "served_versions", "share_services"]


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
