"""The share coordinator's operations on one shard, ported from Kafka's ShareCoordinatorShardTest
(4.2): no files, no runtime, a fixed clock. Kafka's tests replay an op's records by hand; here
`ctx.apply` replays them as it writes them, so the state after an op already includes its
records (e.g. a read by a new leader epoch has recorded it when the read returns)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import pytest

from coordinator.runtime.operation import OpContext
from coordinator.share.persister import SharePartitionKey, ShareState, StateBatch, StateSummary
from coordinator.share.state import ops
from coordinator.share.state.records import ShareSnapshot, ShareTombstone, ShareUpdate, UnknownShareRecord
from coordinator.share.state.shard import ShareGroupOffset, ShareStateSettings, ShareStateShard
from protocol.errors import ErrorCode

NOW = 1_700_000_000_000
TOPIC, TOPIC_2 = uuid.UUID(int=0xA11CE), uuid.UUID(int=0xB0B)
KEY = SharePartitionKey("group1", TOPIC, 0)
B0_10 = StateBatch(0, 10, 0, 1)


class Image:
    """The metadata image: topic id -> partition count."""

    def __init__(self, counts: dict[uuid.UUID, int]) -> None:
        self.counts = counts

    def refresh(self) -> None:
        pass

    def by_id(self, topic_id: uuid.UUID) -> Any:
        n = self.counts.get(topic_id)
        return None if n is None else SimpleNamespace(num_partitions=n)


def new_shard(per_snapshot: int = 50) -> ShareStateShard:
    """Kafka's test config: 50 updates per snapshot, cold snapshots every 10 s."""
    return ShareStateShard(0, ShareStateSettings(per_snapshot, 10_000, 30_000), None, Image({TOPIC: 1, TOPIC_2: 1}))


def run(shard: ShareStateShard, op: Any, params: Any, now: int = NOW) -> tuple[Any, list[Any]]:
    ctx = OpContext(shard, now)
    answer = op(ctx, params)
    return answer, ctx.records


def init(shard: ShareStateShard, key: SharePartitionKey = KEY, state_epoch: int = 0) -> None:
    """Kafka's initSharePartition: a snapshot with leader epoch, start offset and count -1."""
    shard.replay(ShareSnapshot(key, 0, state_epoch, -1, -1, 0, 0, -1, ()), NOW)


def write_params(
    start: int = 0, dcc: int = 11, state: int = 0, leader: int = 0, batches: tuple[StateBatch, ...] = (B0_10,)
) -> ops.WriteParams:
    return ops.WriteParams(KEY, state, leader, start, dcc, batches)


def write_and_replay(shard: ShareStateShard, leader_epoch: int = 0) -> None:
    """Kafka's writeAndReplayRecord: a read by the leader, then its first write."""
    assert run(shard, ops.read, ops.ReadParams(KEY, leader_epoch))[0][0] == ErrorCode.NONE
    assert run(shard, ops.write, write_params(dcc=0, leader=leader_epoch))[0] == ErrorCode.NONE


def test_replay_with_share_snapshot() -> None:
    shard = new_shard()
    first = ShareSnapshot(KEY, 0, 0, 1, 0, 0, 0, 11, (B0_10,))
    second = ShareSnapshot(KEY, 1, 1, 2, 0, 0, 0, 13, (StateBatch(11, 12, 0, 1),))
    assert shard.replay(first, NOW)
    assert shard.states[KEY] == ShareGroupOffset.of_snapshot(first) and shard.leader_epochs[KEY] == 1
    assert shard.replay(second, NOW)
    assert shard.states[KEY] == ShareGroupOffset.of_snapshot(second) and shard.leader_epochs[KEY] == 2


def test_unknown_records_are_skipped() -> None:
    shard = new_shard()
    init(shard)
    before = dict(shard.states)
    assert not shard.replay(UnknownShareRecord(7), NOW)
    assert not shard.replay(ShareTombstone(KEY, record_type=1), NOW)
    assert shard.states == before


def test_write_fails_on_uninitialized_partition() -> None:
    shard = new_shard()
    assert run(shard, ops.write, write_params()) == (ErrorCode.INVALID_REQUEST, [])
    assert KEY not in shard.states


def test_write_state_success() -> None:
    shard = new_shard()
    init(shard)
    write_and_replay(shard)
    code, records = run(shard, ops.write, write_params())
    assert code == ErrorCode.NONE
    assert records == [ShareUpdate(KEY, 0, 0, 0, 11, (B0_10,))]
    assert shard.states[KEY] == ShareGroupOffset(0, 0, 0, 0, 11, (B0_10,))
    assert shard.leader_epochs[KEY] == 0


def test_subsequent_writes_combine_in_the_state() -> None:
    shard = new_shard()
    init(shard)
    write_and_replay(shard)
    run(shard, ops.write, write_params())
    code, records = run(shard, ops.write, write_params(dcc=21, batches=(StateBatch(11, 20, 0, 1),)))
    assert code == ErrorCode.NONE and records == [ShareUpdate(KEY, 0, 0, 0, 21, (StateBatch(11, 20, 0, 1),))]
    combined = shard.states[KEY]
    assert (combined.snapshot_epoch, combined.leader_epoch, combined.start_offset) == (0, 0, 0)
    assert combined.batches == (StateBatch(0, 20, 0, 1),)  # the same delivery info: one batch
    assert combined.delivery_complete_count == 21


def test_write_invalid_partition() -> None:
    shard = new_shard()
    params = ops.WriteParams(SharePartitionKey("group1", TOPIC, -1), 0, 0, 0, 11, (B0_10,))
    assert run(shard, ops.write, params) == (ErrorCode.INVALID_REQUEST, [])
    assert shard.states == {} and shard.leader_epochs == {}


def test_write_unknown_topic_or_partition() -> None:
    shard = new_shard()
    init(shard)
    shard.topics = None  # Kafka's null metadata image
    assert run(shard, ops.write, write_params()) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    assert shard.leader_epochs[KEY] == -1
    shard.topics = Image({TOPIC: 0})  # the topic exists, the partition does not
    assert run(shard, ops.write, write_params())[0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_write_fenced_leader_epoch() -> None:
    shard = new_shard()
    init(shard)
    write_and_replay(shard, 1)
    assert run(shard, ops.write, write_params(leader=0)) == (ErrorCode.FENCED_LEADER_EPOCH, [])
    assert shard.leader_epochs[KEY] == 1


def test_write_fenced_state_epoch() -> None:
    shard = new_shard()
    init(shard, state_epoch=1)
    params = write_params(dcc=10, state=0, leader=5, batches=(StateBatch(11, 20, 0, 1),))
    assert run(shard, ops.write, params) == (ErrorCode.FENCED_STATE_EPOCH, [])
    assert shard.leader_epochs[KEY] != 5 and shard.state_epochs[KEY] == 1


def test_write_with_epochs_not_given_is_not_fenced() -> None:
    """A write's -1 leader or state epoch is not checked (maybeGetWriteStateError)."""
    shard = new_shard()
    init(shard, state_epoch=3)
    assert run(shard, ops.read, ops.ReadParams(KEY, 4))[0][0] == ErrorCode.NONE
    assert run(shard, ops.write, write_params(state=-1, leader=-1))[0] == ErrorCode.NONE
    assert shard.leader_epochs[KEY] == 4  # a write never moves the leader epoch


def test_read_fails_on_uninitialized_partition() -> None:
    shard = new_shard()
    assert run(shard, ops.read, ops.ReadParams(KEY, 1)) == ((ErrorCode.INVALID_REQUEST, None), [])
    assert KEY not in shard.leader_epochs


def test_read_state_success_records_the_new_leader_epoch() -> None:
    shard = new_shard()
    init(shard)
    write_and_replay(shard)
    (code, state), records = run(shard, ops.read, ops.ReadParams(KEY, 1))
    assert code == ErrorCode.NONE
    assert state == ShareState(0, 0, 0, 0, (B0_10,))
    assert records == [ShareUpdate(KEY, 0, 1, 0, 0, ())]
    assert shard.leader_epochs[KEY] == 1


def test_read_state_summary_success() -> None:
    shard = new_shard()
    init(shard)
    write_and_replay(shard)
    assert run(shard, ops.read_summary, ops.ReadParams(KEY, 1)) == ((ErrorCode.NONE, StateSummary(0, 0, 0, 0)), [])
    assert shard.leader_epochs[KEY] == 0


def test_read_summary_of_a_key_without_state() -> None:
    summary = run(new_shard(), ops.read_summary, ops.ReadParams(KEY, 0))[0]
    assert summary == (ErrorCode.NONE, StateSummary(0, -1, 0, -1))


@pytest.mark.parametrize("op", [ops.read, ops.read_summary])
def test_read_invalid_partition(op: Any) -> None:
    shard = new_shard()
    init(shard)
    write_and_replay(shard)
    assert run(shard, op, ops.ReadParams(SharePartitionKey("group1", TOPIC, -1), 5)) == (
        (ErrorCode.INVALID_REQUEST, None),
        [],
    )
    assert shard.leader_epochs[KEY] == 0


@pytest.mark.parametrize("op", [ops.read, ops.read_summary])
def test_read_unknown_topic(op: Any) -> None:
    shard = new_shard()
    init(shard)
    write_and_replay(shard)
    shard.topics = None
    assert run(shard, op, ops.ReadParams(KEY, 5)) == ((ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None), [])
    assert shard.leader_epochs[KEY] == 0


def test_read_fenced_leader_epoch() -> None:
    shard = new_shard()
    init(shard)
    write_and_replay(shard, 5)
    assert run(shard, ops.read, ops.ReadParams(KEY, 3)) == ((ErrorCode.FENCED_LEADER_EPOCH, None), [])
    assert shard.leader_epochs[KEY] == 5


def test_non_sequential_batch_updates() -> None:
    """A snapshot after every write (0 updates per snapshot): acking batch 1, then moving the
    start offset past it while acking batch 3, must not lose batch 2."""
    shard = new_shard(per_snapshot=0)
    init(shard)
    write_and_replay(shard)
    b1, b2, b3 = StateBatch(100, 109, 1, 1), StateBatch(110, 119, 1, 2), StateBatch(120, 129, 1, 0)
    code, records = run(shard, ops.write, write_params(start=100, dcc=0, batches=(b1, b2, b3)))
    assert code == ErrorCode.NONE
    assert records == [ShareSnapshot(KEY, 3, 0, 0, 100, NOW, NOW, 0, (b1, b2, b3))]
    run(shard, ops.write, write_params(start=-1, dcc=10, batches=(StateBatch(100, 109, 2, 1),)))
    code, records = run(shard, ops.write, write_params(start=110, dcc=10, batches=(StateBatch(120, 129, 2, 1),)))
    final = ShareSnapshot(KEY, 5, 0, 0, 110, NOW, NOW, 10, (b2, StateBatch(120, 129, 2, 1)))
    assert code == ErrorCode.NONE and records == [final]
    assert shard.states[KEY] == ShareGroupOffset.of_snapshot(final)


def test_a_snapshot_follows_the_configured_number_of_updates() -> None:
    shard = new_shard(per_snapshot=2)
    init(shard)
    kinds = []
    for i in range(7):
        code, records = run(shard, ops.write, write_params(start=i, batches=(StateBatch(i, i, 2, 1),)))
        assert code == ErrorCode.NONE
        kinds.append(type(records[0]).__name__)
    # updates counted 0, 1, 2 before the first snapshot (Kafka's snapshotUpdateCount starts at 0)
    assert kinds == ["ShareUpdate"] * 3 + ["ShareSnapshot"] + ["ShareUpdate"] * 2 + ["ShareSnapshot"]
    state = shard.states[KEY]
    assert state.snapshot_epoch == 2 and state.start_offset == 6
    assert state.batches == (StateBatch(6, 6, 2, 1),)


def test_read_leader_epoch_update_success() -> None:
    shard = new_shard()
    init(shard)
    (code, state), records = run(shard, ops.read, ops.ReadParams(KEY, 2))
    assert code == ErrorCode.NONE and state == ShareState(0, -1, -1, -1, ())
    assert records == [ShareUpdate(KEY, 0, 2, -1, -1, ())]
    assert shard.states[KEY] == ShareGroupOffset(0, 0, 2, -1, -1, ())
    assert shard.leader_epochs[KEY] == 2


def test_read_leader_epoch_no_update() -> None:
    shard = new_shard()
    init(shard)
    assert run(shard, ops.read, ops.ReadParams(KEY, 2))[1] != []
    assert run(shard, ops.read, ops.ReadParams(KEY, -1)) == ((ErrorCode.FENCED_LEADER_EPOCH, None), [])
    assert run(shard, ops.read, ops.ReadParams(KEY, 2))[1] == []  # the same leader epoch: nothing written


def test_delete_state_success() -> None:
    shard = new_shard()
    shard.replay(ShareSnapshot(KEY, 0, 0, 0, 0, 0, 0, -1, (B0_10,)), NOW)
    assert run(shard, ops.delete, KEY) == (ErrorCode.NONE, [ShareTombstone(KEY)])
    assert KEY not in shard.states and KEY not in shard.leader_epochs and KEY not in shard.state_epochs


def test_delete_state_uninitialized_writes_nothing() -> None:
    assert run(new_shard(), ops.delete, KEY) == (ErrorCode.NONE, [])


def test_delete_state_invalid_and_unknown() -> None:
    shard = new_shard()
    assert run(shard, ops.delete, SharePartitionKey("group1", TOPIC, -1)) == (ErrorCode.INVALID_REQUEST, [])
    shard.topics = None
    assert run(shard, ops.delete, KEY) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    shard.topics = Image({TOPIC: 0})
    assert run(shard, ops.delete, KEY) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])


def test_initialize_state_success() -> None:
    shard = new_shard()
    code, records = run(shard, ops.initialize, ops.InitializeParams(KEY, 5, 10))
    assert code == ErrorCode.NONE
    assert records == [ShareSnapshot(KEY, 0, 5, 0, 10, NOW, NOW, 0, ())]
    assert shard.state_epochs[KEY] == 5 and KEY in shard.states
    code, records = run(shard, ops.initialize, ops.InitializeParams(KEY, 6, -1), NOW + 1)
    assert records == [ShareSnapshot(KEY, 1, 6, 0, -1, NOW + 1, NOW + 1, -1, ())]  # next snapshot epoch


def test_initialize_state_invalid_request() -> None:
    shard = new_shard()
    bad = ops.InitializeParams(SharePartitionKey("group1", TOPIC, -1), 0, -1)
    assert run(shard, ops.initialize, bad) == (ErrorCode.INVALID_REQUEST, [])
    shard.replay(ShareSnapshot(KEY, 0, 5, 0, 0, 0, 0, -1, ()), NOW)
    assert run(shard, ops.initialize, ops.InitializeParams(KEY, 0, -1)) == (ErrorCode.FENCED_STATE_EPOCH, [])


def test_initialize_unknown_topic_or_partition() -> None:
    shard = new_shard()
    shard.topics = None
    assert run(shard, ops.initialize, ops.InitializeParams(KEY, 0, -1)) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    shard.topics = Image({TOPIC: 0})
    assert run(shard, ops.initialize, ops.InitializeParams(KEY, 0, -1)) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])


def test_out_of_range_fields_are_refused_before_anything_is_written() -> None:
    shard = new_shard()
    init(shard)
    for params in (
        write_params(batches=(StateBatch(0, 1, 300, 1),)),
        write_params(batches=(StateBatch(0, 1, 0, 1 << 15),)),
        write_params(start=1 << 63),
        write_params(leader=1 << 31),
    ):
        assert run(shard, ops.write, params) == (ErrorCode.INVALID_REQUEST, [])
    assert run(shard, ops.read, ops.ReadParams(KEY, 1 << 31)) == ((ErrorCode.INVALID_REQUEST, None), [])
    long_group = SharePartitionKey("g" * 40_000, TOPIC, 0)
    assert run(shard, ops.initialize, ops.InitializeParams(long_group, 0, -1)) == (ErrorCode.INVALID_REQUEST, [])
    assert shard.states[KEY] == ShareGroupOffset(0, 0, -1, -1, -1, ())


# -- cold snapshots and deleted topics ------------------------------------------------------------


def snapshot(key: SharePartitionKey, written_at: int, epoch: int = 0) -> ShareSnapshot:
    return ShareSnapshot(key, epoch, 0, 0, 0, written_at, written_at, 11, (B0_10,))


def cold(shard: ShareStateShard, now: int) -> list[Any]:
    return run(shard, lambda ctx, _: ops.snapshot_cold_partitions(ctx), None, now)[1]


def test_snapshot_cold_partitions_none_eligible() -> None:
    shard = new_shard()
    shard.replay(snapshot(KEY, NOW), NOW)
    shard.replay(snapshot(KEY._replace(partition=1), NOW), NOW)
    assert cold(shard, NOW + 5_000) == []


def test_snapshot_cold_partitions_once_then_quiet() -> None:
    shard = new_shard()
    shard.replay(snapshot(KEY, NOW), NOW)
    expected = ShareSnapshot(KEY, 1, 0, 0, 0, NOW, NOW + 12_000, 11, (B0_10,))
    assert cold(shard, NOW + 12_000) == [expected]
    assert cold(shard, NOW + 24_000) == []  # every state is a cold snapshot already


def test_snapshot_cold_partitions_after_an_update_keeps_the_update() -> None:
    shard = new_shard()
    shard.replay(snapshot(KEY, NOW), NOW)
    cold(shard, NOW + 12_000)
    shard.replay(ShareUpdate(KEY, 0, 0, 0, 11, (B0_10,)), NOW)
    assert shard.states[KEY].write_timestamp == NOW + 12_000  # an update carries no time


def test_snapshot_cold_partitions_partial() -> None:
    shard = new_shard()
    other = KEY._replace(partition=1)
    shard.replay(snapshot(KEY, NOW), NOW)
    shard.replay(snapshot(other, NOW + 15_000), NOW)
    records = cold(shard, NOW + 12_000)
    assert records == [ShareSnapshot(KEY, 1, 0, 0, 0, NOW, NOW + 12_000, 11, (B0_10,))]
    assert shard.states[other].write_timestamp == NOW + 15_000
    assert shard.states[KEY].write_timestamp == NOW + 12_000


def test_states_of_deleted_topics_are_tombstoned() -> None:
    shard = new_shard()
    assert run(shard, lambda ctx, _: ops.forget_deleted_topics(ctx), None)[1] == []
    shard.replay(snapshot(KEY, NOW), NOW)
    shard.replay(snapshot(KEY._replace(topic_id=TOPIC_2), NOW), NOW)
    shard.topics = Image({TOPIC_2: 1})  # TOPIC was deleted
    assert run(shard, lambda ctx, _: ops.forget_deleted_topics(ctx), None)[1] == [ShareTombstone(KEY)]
    assert list(shard.states) == [KEY._replace(topic_id=TOPIC_2)]


def test_written_moves_the_pruning_point() -> None:
    shard = new_shard()
    other = KEY._replace(partition=1)
    shard.written([snapshot(KEY, NOW), ShareUpdate(KEY, 0, 0, 0, 0, ()), snapshot(other, NOW)], 10)
    assert shard.offsets.last_redundant_offset() == 10
    shard.written([snapshot(KEY, NOW)], 20)
    assert shard.offsets.last_redundant_offset() == 12
    shard.written([ShareTombstone(other)], 21)
    shard.written([snapshot(KEY, NOW)], 22)
    assert shard.offsets.last_redundant_offset() == 22
