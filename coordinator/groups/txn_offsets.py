"""Offsets committed inside transactions, held until the transaction's marker (Kafka's
OffsetMetadataManager.pendingTransactionalOffsets, openTransactionsByGroup and
replayEndTransactionMarker).

A TxnOffsetCommit writes ordinary OffsetCommit records in a transactional batch of its producer;
replaying one puts it here, not in the offset store. The COMMIT marker moves the producer's
pending offsets into the store, each one only if no later plain commit of the same partition was
replayed meanwhile (Kafka compares record offsets: "we always keep the most recent committed
offset"; replay order is log order, so a replay sequence number stands in for the offset); the
ABORT marker drops them. An offset tombstone removes the pending offsets of its partition too.
Invariant: `open_by_group[g]` holds exactly the producers with a pending offset of group g.
"""

from __future__ import annotations

from coordinator.groups.offset_store import OffsetStore, TopicPartition
from coordinator.groups.records import OffsetCommitRecord

# producer id -> group -> (topic, partition) -> (record, replay sequence number)
Pending = dict[int, dict[str, dict[TopicPartition, tuple[OffsetCommitRecord, int]]]]


class TransactionalOffsets:
    def __init__(self) -> None:
        self.pending: Pending = {}
        self.open_by_group: dict[str, set[int]] = {}
        # Sequence numbers of plain commits replayed while their group had open transactions
        # (the only ones a marker can have to compare with).
        self._committed_seq: dict[tuple[str, str, int], int] = {}
        self._seq = 0

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    # -- replay ---------------------------------------------------------------------------------
    def on_commit(self, record: OffsetCommitRecord, seq: int) -> None:
        """A plain (non-transactional) commit was replayed."""
        if record.group_id in self.open_by_group:
            self._committed_seq[(record.group_id, record.topic, record.partition)] = seq

    def on_tombstone(self, group_id: str, topic: str, partition: int) -> None:
        """OffsetMetadataManager.replay of a tombstone: pending offsets of the partition go too."""
        self._committed_seq.pop((group_id, topic, partition), None)
        for producer_id in list(self.open_by_group.get(group_id, ())):
            offsets = self.pending.get(producer_id, {}).get(group_id)
            if offsets is not None:
                offsets.pop((topic, partition), None)

    def add(self, producer_id: int, record: OffsetCommitRecord, seq: int) -> None:
        by_group = self.pending.setdefault(producer_id, {})
        by_group.setdefault(record.group_id, {})[(record.topic, record.partition)] = (record, seq)
        self.open_by_group.setdefault(record.group_id, set()).add(producer_id)

    def end(self, producer_id: int, commit: bool, store: OffsetStore) -> int:
        """replayEndTransactionMarker: materialise (commit) or drop (abort) the producer's pending
        offsets; returns how many were materialised."""
        by_group = self.pending.pop(producer_id, None)
        if by_group is None:
            return 0
        materialised = 0
        for group_id, offsets in by_group.items():
            for (topic, partition), (record, seq) in offsets.items():
                key = (group_id, topic, partition)
                if commit and self._committed_seq.get(key, -1) < seq:
                    store.put(record)
                    self._committed_seq[key] = seq
                    materialised += 1
            producers = self.open_by_group.get(group_id)
            if producers is not None:
                producers.discard(producer_id)
                if not producers:
                    del self.open_by_group[group_id]
                    self._forget_group(group_id)
        return materialised

    def _forget_group(self, group_id: str) -> None:
        for key in [k for k in self._committed_seq if k[0] == group_id]:
            del self._committed_seq[key]

    # -- questions --------------------------------------------------------------------------------
    def has_pending(self, group_id: str, topic: str, partition: int) -> bool:
        """hasPendingTransactionalOffsets: an open transaction holds an offset of the partition."""
        for producer_id in self.open_by_group.get(group_id, ()):
            if (topic, partition) in self.pending.get(producer_id, {}).get(group_id, {}):
                return True
        return False

    def has_open_transactions(self, group_id: str) -> bool:
        return group_id in self.open_by_group

    def pending_partitions(self, group_id: str) -> set[TopicPartition]:
        out: set[TopicPartition] = set()
        for producer_id in self.open_by_group.get(group_id, ()):
            out.update(self.pending.get(producer_id, {}).get(group_id, {}))
        return out

    def snapshot(self) -> dict[int, dict[str, dict[TopicPartition, OffsetCommitRecord]]]:
        """The pending offsets without sequence numbers (tests compare live and reloaded state)."""
        return {
            pid: {g: {tp: rec for tp, (rec, _) in offs.items()} for g, offs in groups.items()}
            for pid, groups in self.pending.items()
        }
