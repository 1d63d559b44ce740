"""Committed offsets in memory: group -> {(topic, partition): OffsetCommitRecord}.

The replayed image of the OffsetCommit records in __consumer_offsets (Kafka's
OffsetMetadataManager.offsets). Invariant: it holds exactly the latest non-tombstoned commit per
(group, topic, partition); a group key exists only while it has at least one offset. It is
plain data: the writer of records (the runtime) and replay are its only mutators.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from coordinator.groups.records import OffsetCommitRecord

TopicPartition = tuple[str, int]


class OffsetStore:
    def __init__(self) -> None:
        self.groups: dict[str, dict[TopicPartition, OffsetCommitRecord]] = {}

    def put(self, record: OffsetCommitRecord) -> None:
        offsets = self.groups.get(record.group_id)
        if offsets is None:  # (setdefault would build a dict on every call: this is every commit's path)
            offsets = self.groups[record.group_id] = {}
        offsets[(record.topic, record.partition)] = record

    def put_all(self, records: Iterable[OffsetCommitRecord]) -> list[str]:
        """`put` of each record in order (a commit's records: one group, so one lookup). Returns
        the group ids in the order they first appear (replay makes each group exist)."""
        groups = self.groups
        seen: list[str] = []
        group_id: str | None = None
        offsets: dict[TopicPartition, OffsetCommitRecord] = {}
        for record in records:
            if record.group_id != group_id:
                group_id = record.group_id
                found = groups.get(group_id)
                if found is None:
                    found = groups[group_id] = {}
                offsets = found
                seen.append(group_id)
            offsets[(record.topic, record.partition)] = record
        return seen

    def delete(self, group_id: str, topic: str, partition: int) -> OffsetCommitRecord | None:
        offsets = self.groups.get(group_id)
        if offsets is None:
            return None
        removed = offsets.pop((topic, partition), None)
        if not offsets:
            del self.groups[group_id]
        return removed

    def get(self, group_id: str, topic: str, partition: int) -> OffsetCommitRecord | None:
        offsets = self.groups.get(group_id)
        return None if offsets is None else offsets.get((topic, partition))

    def group_offsets(self, group_id: str) -> dict[TopicPartition, OffsetCommitRecord]:
        """The group's offsets (a copy; empty if none)."""
        return dict(self.groups.get(group_id, {}))

    def has_offsets(self, group_id: str) -> bool:
        return group_id in self.groups

    def drop_group(self, group_id: str) -> dict[TopicPartition, OffsetCommitRecord]:
        """Forget every offset of the group (in memory only; callers write the tombstones)."""
        return self.groups.pop(group_id, {})

    def group_ids(self) -> Iterator[str]:
        return iter(list(self.groups))

    def __len__(self) -> int:
        return sum(len(o) for o in self.groups.values())
