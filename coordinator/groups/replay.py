"""Replay: apply one __consumer_offsets record to a shard's groups and offsets.

The one path records take into memory, live (OpContext.apply, apply_all) and at load; an
offset commit's records take `replay_offset_commits`, alone or a whole commit at once. Copies Kafka's
GroupMetadataManager.replay / OffsetMetadataManager.replay and ClassicGroup.fromRecord: a
GroupMetadataRecord replaces the whole group (Empty without members, else Stable, the selected
protocol's metadata as each member's only protocol); a GroupTombstone removes the group (its
offsets go only with their own tombstones); an offset commit for an unknown group creates an
empty "simple" group; UnknownRecord is skipped. Live, a classic group's own GroupMetadataRecord is
not replayed (its operation already changed the group: Kafka's replayRecords=false). The groups
map also holds KIP-848 consumer groups and KIP-932 share groups (their records go to
consumer/replay.py and share/replay.py): as in Kafka, a GroupMetadataRecord replaces whatever
group has its id and a GroupTombstone removes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from coordinator.groups.consumer.group import ConsumerGroup
from coordinator.groups.group import ClassicGroup
from coordinator.groups.member import ClassicMember
from coordinator.groups.offset_store import OffsetStore
from coordinator.groups.record_types import (
    GroupMetadataRecord,
    GroupTombstone,
    OffsetCommitRecord,
    OffsetTombstone,
    UnknownRecord,
)
from coordinator.groups.share.group import ShareGroup
from coordinator.groups.state import GroupState

AnyGroup = ClassicGroup | ConsumerGroup | ShareGroup


def group_from_record(record: GroupMetadataRecord, now_ms: int) -> ClassicGroup:
    """Kafka ClassicGroup.fromRecord."""
    group = ClassicGroup(record.group_id, now_ms, GroupState.STABLE if record.members else GroupState.EMPTY)
    protocol_type = record.protocol_type or None
    for m in record.members:
        protocols = [] if record.protocol_name is None else [(record.protocol_name, m.subscription)]
        group.add(
            ClassicMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                session_timeout_ms=m.session_timeout_ms,
                protocol_type=protocol_type or "",
                protocols=protocols,
                assignment=m.assignment,
            )
        )
    group.generation_id = record.generation_id
    group.protocol_type = protocol_type
    group.protocol_name = record.protocol_name
    group.leader_id = record.leader
    group.state_timestamp_ms = record.current_state_timestamp_ms
    group.subscribed_topics = group.compute_subscribed_topics()
    return group


def replay(record: object, groups: dict[str, AnyGroup], offsets: OffsetStore, now_ms: int) -> bool:
    """Apply one record; returns False for a record that was skipped (UnknownRecord)."""
    if isinstance(record, OffsetCommitRecord):
        replay_offset_commits((record,), groups, offsets, now_ms)
    elif isinstance(record, OffsetTombstone):
        offsets.delete(record.group_id, record.topic, record.partition)
    elif isinstance(record, GroupMetadataRecord):
        groups[record.group_id] = group_from_record(record, now_ms)
    elif isinstance(record, GroupTombstone):
        groups.pop(record.group_id, None)
    elif isinstance(record, UnknownRecord):
        return False
    else:
        raise TypeError(f"cannot replay {type(record).__name__}")
    return True


def replay_offset_commits(
    records: Sequence[OffsetCommitRecord], groups: dict[str, AnyGroup], offsets: OffsetStore, now_ms: int
) -> None:
    """Apply offset commits in order: the one path an OffsetCommitRecord takes, alone (`replay`,
    a load) or a whole commit's records at once (live: no per-record dispatch)."""
    for group_id in offsets.put_all(records):
        if group_id not in groups:
            # OffsetMetadataManager.replay: a commit is the only record that can create a
            # (simple) group; the commit of an existing group leaves it as it is.
            groups[group_id] = ClassicGroup(group_id, now_ms)
