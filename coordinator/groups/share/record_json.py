"""Share-group records as Kafka's dump tool prints them (DumpLogSegments --offsets-decoder).

The same shape as consumer/record_json.py: a key prints as `{"type":"<record type>","data":{...}}`
and a value as `{"version":"0","data":{...}}` (a tombstone as `<DELETE>`), with the generated JSON
converters' camelCase field names and uuids in Kafka's Uuid text form.
"""

from __future__ import annotations

from typing import Any

from coordinator.groups.consumer.record_json import DELETE, kafka_uuid
from coordinator.groups.share import records as r


def _tps(items: tuple[r.TopicPartitions, ...]) -> list[dict[str, Any]]:
    return [{"topicId": kafka_uuid(tp.topic_id), "partitions": list(tp.partitions)} for tp in items]


def _infos(items: tuple[r.TopicPartitionsInfo, ...]) -> list[dict[str, Any]]:
    return [
        {"topicId": kafka_uuid(t.topic_id), "topicName": t.topic_name, "partitions": list(t.partitions)} for t in items
    ]


def key_data(record: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"groupId": record.group_id}
    if record.key_type in r.MEMBER_KEY_TYPES:
        data["memberId"] = record.member_id
    return data


def value_data(record: Any) -> dict[str, Any]:
    if isinstance(record, r.ShareGroupMemberMetadataRecord):
        return {
            "rackId": record.rack_id,
            "clientId": record.client_id,
            "clientHost": record.client_host,
            "subscribedTopicNames": list(record.subscribed_topic_names),
        }
    if isinstance(record, r.ShareGroupMetadataRecord):
        return {"epoch": record.epoch, "metadataHash": record.metadata_hash}
    if isinstance(record, r.ShareGroupTargetAssignmentMetadataRecord):
        return {"assignmentEpoch": record.assignment_epoch}
    if isinstance(record, r.ShareGroupTargetAssignmentMemberRecord):
        return {"topicPartitions": _tps(record.topic_partitions)}
    if isinstance(record, r.ShareGroupCurrentMemberAssignmentRecord):
        return {
            "memberEpoch": record.member_epoch,
            "previousMemberEpoch": record.previous_member_epoch,
            "state": record.state,
            "assignedPartitions": _tps(record.assigned_partitions),
        }
    if isinstance(record, r.ShareGroupStatePartitionMetadataRecord):
        return {
            "initializingTopics": _infos(record.initializing_topics),
            "initializedTopics": _infos(record.initialized_topics),
            "deletingTopics": [
                {"topicId": kafka_uuid(t.topic_id), "topicName": t.topic_name} for t in record.deleting_topics
            ],
        }
    raise TypeError(f"not a share-group record value: {type(record).__name__}")


def to_json(record: Any) -> tuple[dict[str, Any], dict[str, Any] | str]:
    """(key JSON, value JSON or "<DELETE>") as Python values."""
    if not r.is_share_record(record):
        raise TypeError(f"not a share-group record: {type(record).__name__}")
    key = {"type": str(record.key_type), "data": key_data(record)}
    if isinstance(record, r.TOMBSTONES):
        return key, DELETE
    return key, {"version": "0", "data": value_data(record)}
