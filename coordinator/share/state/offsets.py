"""Which prefix of a __share_group_state partition no state needs any more (Kafka's
ShareCoordinatorOffsetsManager).

__share_group_state is not compacted (cleanup.policy=delete, retention.ms=-1, KIP-932): a key's
ShareUpdate records all share one record key, so compaction would keep only the last and lose the
others. Instead each key's newest ShareSnapshot makes everything of that key before it redundant;
the smallest such offset over the live keys is the last redundant offset, and the coordinator
deletes the log below it (lifecycle.py). A tombstone counts once and then its key is forgotten:
nothing after a deletion needs that key's older records.
"""

from __future__ import annotations

from coordinator.share.persister import SharePartitionKey

_NONE = 1 << 63  # Long.MAX_VALUE: nothing computed yet


class SnapshotOffsets:
    def __init__(self) -> None:
        self._offsets: dict[SharePartitionKey, int] = {}  # key -> offset of its newest snapshot
        self._last_redundant = _NONE

    def snapshot_written(self, key: SharePartitionKey, offset: int, deleted: bool) -> None:
        """updateState: the key's newest snapshot (or tombstone) is at `offset`."""
        self._offsets[key] = offset
        self._last_redundant = min(self._offsets.values())  # findRedundantOffset
        if deleted:
            del self._offsets[key]

    def last_redundant_offset(self) -> int | None:
        """Every record below this offset is redundant; None when nothing is (yet)."""
        value = self._last_redundant
        return None if value <= 0 or value == _NONE else value
