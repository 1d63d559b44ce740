"""GroupShard.replay_all (what OpContext.apply_all calls) leaves a shard exactly as `replay` of
each record in turn: offsets, groups (a commit's simple group), and what open transactions
learn of plain commits (their sequence numbers decide which offset a COMMIT marker keeps)."""

from __future__ import annotations

from coordinator.groups.record_types import GroupMetadataRecord, GroupTombstone, OffsetCommitRecord, OffsetTombstone
from coordinator.groups.shard import GroupShard
from coordinator.runtime.operation import OpContext


def _commit(group: str, partition: int, offset: int) -> OffsetCommitRecord:
    return OffsetCommitRecord(group, "t", partition, offset, -1, "", 1_000, None)


def _shard_with_open_transaction() -> GroupShard:
    shard = GroupShard()
    shard.replay_transactional(_commit("g", 0, 5), producer_id=7, now_ms=1_000)
    return shard


def _view(shard: GroupShard) -> tuple:
    txn = shard.txn_offsets
    return (shard.offsets.groups, sorted(shard.groups), txn.pending, txn.open_by_group, txn._committed_seq)


def _one_by_one(records: list) -> GroupShard:
    shard = _shard_with_open_transaction()
    for record in records:
        shard.replay(record, 2_000)
    return shard


def test_a_commits_records_replay_as_one_by_one():
    records = [_commit("g", n, 10 + n) for n in range(3)] + [_commit("new", 0, 1)]
    shard = _shard_with_open_transaction()
    shard.replay_all(records, 2_000)
    assert _view(shard) == _view(_one_by_one(records))
    assert "new" in shard.groups  # the commit's simple group
    assert shard.txn_offsets._committed_seq[("g", "t", 0)] > 0  # the open transaction saw it


def test_mixed_records_replay_as_one_by_one():
    records = [
        _commit("g", 0, 10),
        OffsetTombstone("g", "t", 0),
        _commit("h", 1, 3),
        GroupMetadataRecord("h", "", 0, None, None, None, ()),
        GroupTombstone("x"),
        _commit("g", 1, 4),
    ]
    shard = _shard_with_open_transaction()
    shard.replay_all(records, 2_000)
    assert _view(shard) == _view(_one_by_one(records))


def test_apply_all_writes_and_replays_in_order():
    shard = GroupShard()
    ctx = OpContext(shard, 1_000)
    ctx.apply(_commit("g", 0, 1))
    ctx.apply_all([_commit("g", 0, 2), _commit("g", 1, 3)])
    assert [r.offset for r in ctx.records] == [1, 2, 3]
    assert {tp: r.offset for tp, r in shard.offsets.groups["g"].items()} == {("t", 0): 2, ("t", 1): 3}
