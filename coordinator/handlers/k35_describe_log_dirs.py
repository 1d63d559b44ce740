"""DescribeLogDirs (key 35), v1-v4.

v1: as v0 (throttle first). v2: flexible. v3: a top-level error code. v4: the dir's total and
usable bytes (KIP-827). DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED with no dirs
(KafkaApis.handleDescribeLogDirsRequest); topics null = every partition this broker holds.
kgc has one log dir (data.dir): coordinator/admin/log_dirs.py.
"""

from __future__ import annotations

from coordinator.admin.log_dirs import describe_log_dir
from coordinator.handlers.request_context import RequestContext
from coordinator.security.authorization import CLUSTER_NAME, AclOperation, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.describe_log_dirs import (
    DescribeLogDirsPartition,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)


async def handle(ctx: RequestContext, request: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return DescribeLogDirsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results=[])
    wanted: dict[str, set[int]] | None = None
    if request.topics is not None:
        wanted = {}
        for t in request.topics:
            wanted.setdefault(t.topic, set()).update(t.partitions)
    found = describe_log_dir(ctx.broker.data, ctx.broker.cluster, ctx.broker.node_id, wanted)
    return DescribeLogDirsResponse(
        results=[
            DescribeLogDirsResult(
                log_dir=found.path,
                topics=[
                    DescribeLogDirsTopic(
                        name=name,
                        partitions=[
                            DescribeLogDirsPartition(partition_index=p, partition_size=size, offset_lag=0)
                            for p, size in parts
                        ],
                    )
                    for name, parts in sorted(found.partitions.items())
                ],
                total_bytes=found.total_bytes,
                usable_bytes=found.usable_bytes,
            )
        ]
    )
