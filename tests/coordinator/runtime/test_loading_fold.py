"""The loader's fast read (storage.batch.fold over the segment files) gives what reading every
batch through Log.iter_batches gives: the same shard state and counts over many segments, read
in small chunks with yields in between, and the same CorruptLogError on a damaged batch."""

from __future__ import annotations

import functools
import random

import pytest

from coordinator.groups.offset_store import OffsetStore
from coordinator.groups.placement import partition_for
from coordinator.groups.record_types import GroupMetadataRecord, GroupTombstone, OffsetTombstone
from coordinator.groups.records import decode_record, encode_record
from coordinator.groups.replay import replay
from coordinator.groups.shard import GroupShard
from coordinator.runtime import loading
from coordinator.runtime.clock import FakeClock
from storage.batch.fold import Folded, fold_region
from storage.recovery import CorruptLogError
from tests.coordinator.runtime.test_loading import commit, make_writer, member

GROUP = "g1"
P = partition_for(GROUP)


def random_ops(seed: int, n: int) -> list[list]:
    rng = random.Random(seed)
    ops = []
    for i in range(n):
        op: list = []
        for _ in range(rng.randint(1, 5)):
            kind = rng.random()
            if kind < 0.7:
                op.append(commit(GROUP, rng.choice("abc"), rng.randint(0, 5), offset=i))
            elif kind < 0.8:
                op.append(OffsetTombstone(GROUP, rng.choice("abc"), rng.randint(0, 5)))
            elif kind < 0.95:
                members = tuple(member(f"m{j}") for j in range(rng.randint(0, 2)))
                op.append(GroupMetadataRecord(GROUP, "consumer", i, "range", "m0", i, members))
            else:
                op.append(GroupTombstone(GROUP))
        ops.append(op)
    return ops


def _never_fold(fd, start, end, latest, chunk=0) -> Folded:
    return Folded(start, -1, 0, 0, True)  # every batch through Log.iter_batches: the old read


def small_segments_writer(tmp_path, clock):
    return make_writer(tmp_path, clock, **{"offsets.topic.segment.bytes": 2048})


def write_ops(tmp_path, clock, ops) -> list[str]:
    """Each op one batch of partition P, in segments of about 2 KiB; returns their paths."""
    writer = small_segments_writer(tmp_path, clock)
    log = writer.reopen(P)
    for op in ops:
        log.append_kv([encode_record(r) for r in op])
    paths = [seg.log_path for seg in log.segments]
    writer.close()
    return paths


async def load(tmp_path, clock):
    writer = small_segments_writer(tmp_path, clock)
    shard = GroupShard(P)
    try:
        stats = await loading.replay_log(writer, decode_record, P, shard, clock)
        return stats, shard
    finally:
        writer.close()


def state(shard: GroupShard):
    return {g: grp.snapshot() for g, grp in shard.groups.items()}, shard.offsets.groups


@pytest.mark.trio
async def test_fold_read_equals_the_batch_by_batch_read(tmp_path, monkeypatch, autojump_clock):
    clock = FakeClock(0)
    ops = random_ops(3, 400)
    assert len(write_ops(tmp_path, clock, ops)) > 10

    monkeypatch.setattr(loading, "fold_region", _never_fold)
    old_stats, old_shard = await load(tmp_path, clock)
    monkeypatch.setattr(loading, "fold_region", functools.partial(fold_region, chunk=300))
    monkeypatch.setattr(loading, "CHECKPOINT_EVERY", 7)
    new_stats, new_shard = await load(tmp_path, clock)

    assert (new_stats.records, new_stats.batches, new_stats.skipped) == (
        old_stats.records,
        old_stats.batches,
        old_stats.skipped,
    )
    assert new_stats.records == sum(map(len, ops)) and new_stats.batches == len(ops)
    assert state(new_shard) == state(old_shard)
    model_groups: dict = {}
    model_offsets = OffsetStore()
    for op in ops:
        for record in op:
            replay(record, model_groups, model_offsets, 0)
    assert new_shard.offsets.groups == model_offsets.groups


@pytest.mark.trio
async def test_a_damaged_batch_fails_the_load_as_before(tmp_path, monkeypatch, autojump_clock):
    clock = FakeClock(0)
    victim = write_ops(tmp_path, clock, random_ops(4, 200))[3]
    with open(victim, "r+b") as f:  # the last byte of the segment's first batch
        f.seek(8)
        length = int.from_bytes(f.read(4), "big")
        f.seek(length + 12 - 1)
        last = f.read(1)
        f.seek(length + 12 - 1)
        f.write(bytes([last[0] ^ 0xFF]))

    errors = []
    for fold in (_never_fold, fold_region):
        monkeypatch.setattr(loading, "fold_region", fold)
        with pytest.raises(CorruptLogError) as exc:
            await load(tmp_path, clock)
        errors.append(str(exc.value))
    assert errors[0] == errors[1] and "CRC" in errors[0]
