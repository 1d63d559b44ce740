"""The data path with transactions: LSO, read_committed reads, aborted lists, markers, checks."""

from __future__ import annotations

from coordinator.broker.fetch import FetchWant, fetch
from coordinator.broker.offsets import LATEST, list_offset
from protocol.errors import ErrorCode
from storage.batch import Record, encode_batch, encode_marker, frame_bounds
from tests.coordinator.broker.conftest import batch, make_data

PID, EPOCH = 9, 0


def txn(*values: bytes, seq: int = 0, epoch: int = EPOCH) -> bytes:
    records = [Record(None, 1000 + i, b"k" + v, v) for i, v in enumerate(values)]
    return encode_batch(0, records, producer_id=PID, producer_epoch=epoch, base_sequence=seq, transactional=True)


async def end(part, commit: bool, epoch: int = EPOCH):
    result, wait_for = part.append_marker(PID, epoch, commit, 0)
    await part.make_durable(result, wait_for)
    return result


def offsets(records: bytes) -> list[int]:
    return [base for _, base, _ in frame_bounds(records)]


async def test_read_committed_stops_at_the_open_transaction_until_its_commit(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    await part.append(batch(b"a"), 1 << 20)  # 0
    await part.append(txn(b"b", b"c"), 1 << 20)  # 1-2
    await part.append(batch(b"d"), 1 << 20)  # 3
    assert (part.high_watermark, part.last_stable_offset) == (4, 1)
    assert offsets(part.read(0, 1 << 20, True, committed=True)) == [0]
    assert offsets(part.read(0, 1 << 20, True)) == [0, 1, 3]
    assert list_offset(part, LATEST, committed=True) == (ErrorCode.NONE, -1, 1)
    assert list_offset(part, LATEST) == (ErrorCode.NONE, -1, 4)
    result = await end(part, commit=True)
    assert result.error == ErrorCode.NONE and result.base_offset == 4
    assert part.last_stable_offset == 5
    assert offsets(part.read(0, 1 << 20, True, committed=True)) == [0, 1, 3, 4]
    assert part.aborted_transactions(0, part.read(0, 1 << 20, True, committed=True)) == []


async def test_an_aborted_transaction_is_listed_for_read_committed_fetches(tmp_path):
    data = make_data(tmp_path, topics={"t": 1})
    part = data.partition("t", 0)
    await part.append(txn(b"x"), 1 << 20)
    await end(part, commit=False)
    [committed] = await fetch(
        data, [FetchWant("t", 0, 0, 1 << 20)], max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, committed=True
    )
    assert committed.aborted == [(PID, 0)] and committed.last_stable_offset == 2
    [uncommitted] = await fetch(data, [FetchWant("t", 0, 0, 1 << 20)], max_wait_ms=0, min_bytes=1, max_bytes=1 << 20)
    assert uncommitted.aborted is None and offsets(uncommitted.records) == [0, 1]


async def test_an_open_transaction_allows_only_transactional_batches(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    await part.append(txn(b"a"), 1 << 20)
    plain = encode_batch(0, [Record(None, 1, b"k", b"v")], producer_id=PID, producer_epoch=EPOCH, base_sequence=1)
    assert (await part.append(plain, 1 << 20)).error == ErrorCode.INVALID_TXN_STATE


async def test_a_marker_older_than_the_producer_is_refused(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    await part.append(txn(b"a", epoch=2), 1 << 20)
    assert (await end(part, commit=True, epoch=1)).error == ErrorCode.INVALID_PRODUCER_EPOCH
    assert part.last_stable_offset == 0


async def test_a_zombie_batch_after_a_fencing_abort_is_refused(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    await part.append(txn(b"a", epoch=0), 1 << 20)
    await end(part, commit=False, epoch=1)  # the coordinator bumped the epoch to fence
    late = await part.append(txn(b"b", seq=1, epoch=0), 1 << 20)
    assert late.error == ErrorCode.INVALID_PRODUCER_EPOCH


async def test_clients_cannot_write_control_batches(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    result = await part.append(encode_marker(PID, EPOCH, True, 0, 1), 1 << 20)
    assert result.error == ErrorCode.INVALID_RECORD and part.log_end_offset == 0


async def test_an_open_transaction_survives_a_restart(tmp_path):
    data = make_data(tmp_path, topics={"t": 1})
    part = data.partition("t", 0)
    await part.append(batch(b"a"), 1 << 20)
    await part.append(txn(b"b"), 1 << 20)
    data.close()
    part = make_data(tmp_path).partition("t", 0)
    assert (part.high_watermark, part.last_stable_offset) == (2, 1)
    await end(part, commit=False)
    assert part.last_stable_offset == 3 and part.aborted_transactions(0, part.read(0, 1 << 20, True)) == [(PID, 1)]
