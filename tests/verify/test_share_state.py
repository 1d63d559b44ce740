"""The verifier on __share_group_state: a data dir the share coordinator wrote (snapshots,
updates, a deletion; pruned or not) passes, also as its own "before" (the topic is pruned, not
compacted: its many records per key below the active segment are no C3); a copy with one fault
per H check (a record that does not decode, a state in the wrong partition, updates with no
snapshot) is reported at the exact record by both engines, which agree (one Spark run: the
suite shares one session and pays for each run)."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest
import trio
import trio.testing

from coordinator.runtime.clock import FakeClock
from coordinator.share.persister import SharePartitionKey, StateBatch
from coordinator.share.state.placement import SHARE_STATE_TOPIC, partition_for
from coordinator.share.state.records import SNAPSHOT_TYPE, ShareSnapshot, ShareUpdate, encode_key, encode_record
from coordinator.verify.layout import segment_path
from coordinator.verify.oracle import verify
from protocol.errors import ErrorCode as E
from storage.log import Log, LogConfig
from tests.support.share_state import ShareStateHarness

NPARTS = 3  # the harness's share.coordinator.state.topic.num.partitions
SETTINGS = {
    "share_coordinator_state_topic_segment_bytes": 2048,
    "share_coordinator_snapshot_update_records_per_snapshot": 3,
    "share_coordinator_state_topic_prune_interval_ms": 1000,
    "share_coordinator_cold_partition_snapshot_interval_ms": 1000,
}


async def _write(path: Path, prune: bool) -> None:
    h = ShareStateHarness(path, **SETTINGS)
    async with h.running():
        keys = [h.key(f"g{i}", i % 4) for i in range(6)]
        for key in keys:
            assert await h.service.initialize(key, 0, 0) == E.NONE
        for offset in range(120):
            assert await h.ack(keys[offset % 6], offset) == E.NONE
        assert await h.service.delete(keys[5]) == E.NONE
        if prune:
            await trio.sleep(2.5)  # cold snapshots and pruning passes


def _append(data_dir: Path, partition: int, key: bytes, value: bytes | None) -> tuple[str, str, int, int]:
    """Append one record to a partition's active segment: (dir name, file, position, offset)."""
    directory = data_dir / f"{SHARE_STATE_TOPIC}-{partition}"
    log = Log.open(directory, LogConfig(segment_bytes=1 << 20), FakeClock(0))
    try:
        base = log.active_segment.base_offset
        position = os.path.getsize(segment_path(str(directory), base))
        offset = log.append_kv([(key, value)], 0)
    finally:
        log.close()
    return directory.name, segment_path(str(directory), base), position, offset


@pytest.fixture(scope="module")
def share_dirs(tmp_path_factory) -> tuple[str, str, set[tuple]]:
    root = tmp_path_factory.mktemp("share-verify")
    clean, pruned, faulty = root / "clean", root / "pruned", root / "faulty"
    trio.run(_write, clean, False, clock=trio.testing.MockClock(autojump_threshold=0))
    trio.run(_write, pruned, True, clock=trio.testing.MockClock(autojump_threshold=0))
    assert verify(str(pruned), before=str(pruned), share_partitions=NPARTS).violations == []
    assert {p.name for p in pruned.glob(f"{SHARE_STATE_TOPIC}-*/*.log")} != {"00000000000000000000.log"}
    shutil.copytree(clean, faulty)
    topic = uuid.UUID(int=7)
    key_of = {i: SharePartitionKey(f"fault-{i}", topic, 0) for i in range(200)}
    home = {i: partition_for(k, NPARTS) for i, k in key_of.items()}
    a, b, c = (next(i for i in key_of if home[i] == p and i > n) for p, n in ((1, 0), (1, 50), (2, 100)))
    expected = set()
    _, file, pos, off = _append(faulty, 1, encode_key(SNAPSHOT_TYPE, key_of[a]), b"\x00\x00\x01")
    expected.add(("H1", file, pos, off))
    wrong = ShareSnapshot(key_of[c], 0, 0, 0, 0, 0, 0, -1, ())  # belongs in partition 2
    _, file, pos, off = _append(faulty, 1, *encode_record(wrong))
    expected.add(("H2", file, pos, off))
    orphan = ShareUpdate(key_of[b], 0, 0, 5, -1, (StateBatch(5, 5, 2, 1),))  # no snapshot of it anywhere
    _, file, pos, off = _append(faulty, 1, *encode_record(orphan))
    expected.add(("H3", file, pos, off))
    return str(clean), str(faulty), expected


def test_oracle_passes_the_coordinators_own_logs(share_dirs):
    clean, _, _ = share_dirs
    assert max(len(list(d.glob("*.log"))) for d in Path(clean).glob(f"{SHARE_STATE_TOPIC}-*")) > 2
    assert verify(clean, share_partitions=NPARTS).violations == []
    assert verify(clean, before=clean, share_partitions=NPARTS).violations == []


def test_oracle_reports_each_share_fault_exactly(share_dirs):
    _, faulty, expected = share_dirs
    assert verify(faulty, share_partitions=NPARTS).keys() == expected


@pytest.mark.spark
def test_spark_reports_the_same(spark, share_dirs):
    from coordinator.verify import spark_checks

    _, faulty, expected = share_dirs
    report = spark_checks.run(spark, faulty, before=faulty, share_partitions=NPARTS, engine="python")
    assert report.keys() == expected == verify(faulty, before=faulty, share_partitions=NPARTS).keys()
