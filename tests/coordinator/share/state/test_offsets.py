"""Kafka's ShareCoordinatorOffsetsManagerTest, case for case: (key, offset, expected last
redundant offset after it, deleted?)."""

from __future__ import annotations

import uuid

import pytest

from coordinator.share.persister import SharePartitionKey
from coordinator.share.state.offsets import SnapshotOffsets

K1 = SharePartitionKey("gs1", uuid.UUID(int=1), 0)
K2 = SharePartitionKey("gs2", uuid.UUID(int=2), 0)
K3 = SharePartitionKey("gs1", uuid.UUID(int=3), 1)
K4 = SharePartitionKey("gs1", uuid.UUID(int=4), 7)

Step = tuple[SharePartitionKey, int, int | None, bool]
CASES: dict[str, list[Step]] = {
    "adds to internal state": [(K1, 0, None, False), (K1, 10, 10, False), (K2, 15, 10, False), (K1, 25, 15, True)],
    "no redundant state single key": [(K1, 10, 10, False)],
    "no redundant state single key with delete": [(K1, 10, 10, True)],
    "no redundant state multiple keys": [(K1, 10, 10, False), (K4, 11, 10, False), (K2, 13, 10, False)],
    "no redundant state multiple keys with delete": [(K1, 10, 10, True), (K4, 11, 11, True), (K2, 13, 13, True)],
    "redundant state single key": [(K1, 10, 10, False), (K1, 11, 11, False), (K1, 15, 15, False)],
    "redundant state multiple keys": [
        (K1, 10, 10, False), (K2, 11, 10, False), (K3, 15, 10, False), (K2, 16, 10, False), (K1, 17, 15, False)
    ],
    "redundant state multiple keys with delete": [
        (K1, 10, 10, False), (K2, 11, 10, False), (K3, 15, 10, True), (K2, 16, 10, False), (K1, 17, 16, False)
    ],
    "redundant state reverse key order": [
        (K1, 10, 10, False), (K2, 11, 10, False), (K3, 15, 10, False),
        (K3, 18, 10, False), (K2, 20, 10, False), (K1, 25, 18, False),
    ],
    "redundant state reverse key order with delete": [
        (K1, 10, 10, False), (K2, 11, 10, False), (K3, 15, 10, False),
        (K3, 18, 10, True), (K2, 20, 10, True), (K1, 25, 25, False),
    ],
    "redundant state infrequently written partition": [
        (K1, 10, 10, False), (K2, 11, 10, False), (K3, 15, 10, False), (K2, 18, 10, False), (K3, 20, 10, False),
        (K2, 22, 10, False), (K3, 25, 10, False), (K2, 27, 10, False), (K3, 28, 10, False), (K1, 30, 27, False),
    ],
    "redundant state infrequently written partition with delete": [
        (K1, 10, 10, False), (K2, 11, 10, False), (K3, 15, 10, False), (K2, 18, 10, False),
        (K3, 20, 10, True), (K2, 22, 10, False), (K2, 27, 10, True), (K1, 30, 30, False),
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_last_redundant_offset_matches_kafka(name: str) -> None:
    offsets = SnapshotOffsets()
    for key, offset, expected, deleted in CASES[name]:
        offsets.snapshot_written(key, offset, deleted)
        assert offsets.last_redundant_offset() == expected, (name, key, offset)
