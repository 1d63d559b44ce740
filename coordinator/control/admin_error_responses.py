"""Error answers of the admin and client-telemetry APIs, for error_responses.error_response:
DeleteRecords (per partition, low watermark -1), DescribeConfigs / AlterConfigs /
IncrementalAlterConfigs (per resource), CreatePartitions (per topic), ElectLeaders (per
partition, and the top-level code from v1), DescribeTopicPartitions (per topic), DescribeLogDirs
(the top-level code, v3+; v1-2 have nowhere to put it), ListConfigResources, GetTelemetrySubscriptions
and PushTelemetry (the top-level code). Each copies Kafka's `<Api>Request.getErrorResponse`.
"""

from __future__ import annotations

from typing import Any

from protocol.messages import (
    alter_configs,
    create_partitions,
    delete_records,
    describe_configs,
    describe_log_dirs,
    describe_topic_partitions,
    elect_leaders,
    incremental_alter_configs,
)

__all__ = [
    "delete_records_error",
    "describe_configs_error",
    "alter_configs_error",
    "incremental_alter_configs_error",
    "create_partitions_error",
    "elect_leaders_error",
    "describe_topic_partitions_error",
    "describe_log_dirs_error",
]


def delete_records_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = delete_records
    return m.DeleteRecordsResponse(
        topics=[
            m.DeleteRecordsTopicResult(
                name=t.name,
                partitions=[
                    m.DeleteRecordsPartitionResult(partition_index=p.partition_index, low_watermark=-1, error_code=code)
                    for p in t.partitions
                ],
            )
            for t in req.topics
        ]
    )


def describe_configs_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = describe_configs
    return m.DescribeConfigsResponse(
        results=[
            m.DescribeConfigsResult(
                error_code=code, error_message=message, resource_type=r.resource_type, resource_name=r.resource_name
            )
            for r in req.resources
        ]
    )


def alter_configs_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = alter_configs
    return m.AlterConfigsResponse(
        responses=[
            m.AlterConfigsResourceResponse(
                error_code=code, error_message=message, resource_type=r.resource_type, resource_name=r.resource_name
            )
            for r in req.resources
        ]
    )


def incremental_alter_configs_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = incremental_alter_configs
    return m.IncrementalAlterConfigsResponse(
        responses=[
            m.AlterConfigsResourceResponse(
                error_code=code, error_message=message, resource_type=r.resource_type, resource_name=r.resource_name
            )
            for r in req.resources
        ]
    )


def create_partitions_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = create_partitions
    return m.CreatePartitionsResponse(
        results=[m.CreatePartitionsTopicResult(name=t.name, error_code=code, error_message=message) for t in req.topics]
    )


def elect_leaders_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = elect_leaders
    return m.ElectLeadersResponse(
        error_code=code,
        replica_election_results=[
            m.ReplicaElectionResult(
                topic=t.topic,
                partition_result=[
                    m.PartitionResult(partition_id=p, error_code=code, error_message=message) for p in t.partitions
                ],
            )
            for t in req.topic_partitions or ()
        ],
    )


def describe_topic_partitions_error(version: int, req: Any, code: int, message: str | None) -> Any:
    m = describe_topic_partitions
    return m.DescribeTopicPartitionsResponse(
        topics=[
            m.DescribeTopicPartitionsResponseTopic(error_code=code, name=t.name, is_internal=False, partitions=[])
            for t in req.topics
        ]
    )


def describe_log_dirs_error(version: int, req: Any, code: int, message: str | None) -> Any:
    return describe_log_dirs.DescribeLogDirsResponse(error_code=code)
