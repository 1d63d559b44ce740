"""Idempotent produce: Kafka's ProducerStateManager rules, and their recovery from the log."""

from __future__ import annotations

from coordinator.broker.producer_ids import ProducerIdManager
from protocol.errors import ErrorCode
from tests.coordinator.broker.conftest import batch, make_data

PID = 7


async def produce(part, *values, epoch=0, seq=0, pid=PID):
    return await part.append(batch(*values, producer_id=pid, epoch=epoch, seq=seq), 1 << 20)


async def test_in_order_batches_are_appended(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    first = await produce(part, b"a", b"b", seq=0)
    second = await produce(part, b"c", seq=2)
    assert (first.error, first.base_offset) == (ErrorCode.NONE, 0)
    assert (second.error, second.base_offset) == (ErrorCode.NONE, 2)
    assert part.log_end_offset == 3


async def test_a_retried_batch_gets_the_original_offset_and_no_second_copy(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    await produce(part, b"a", b"b", seq=0)
    await produce(part, b"c", seq=2)
    retry = await produce(part, b"a", b"b", seq=0)
    assert (retry.error, retry.base_offset) == (ErrorCode.NONE, 0)
    assert part.log_end_offset == 3


async def test_only_the_last_five_batches_are_recognised_as_duplicates(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    for seq in range(6):
        await produce(part, b"x", seq=seq)
    oldest = await produce(part, b"x", seq=0)  # fell out of the 5-batch window: now a gap
    assert oldest.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    recent = await produce(part, b"x", seq=1)
    assert (recent.error, recent.base_offset) == (ErrorCode.NONE, 1)
    assert part.log_end_offset == 6


async def test_a_sequence_gap_is_out_of_order(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    await produce(part, b"a", seq=0)
    gap = await produce(part, b"b", seq=2)
    assert gap.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert part.log_end_offset == 1


async def test_a_stale_epoch_is_refused_and_a_new_epoch_must_start_at_zero(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    await produce(part, b"a", epoch=1, seq=0)
    stale = await produce(part, b"b", epoch=0, seq=1)
    assert stale.error == ErrorCode.INVALID_PRODUCER_EPOCH
    bumped_midway = await produce(part, b"b", epoch=2, seq=5)
    assert bumped_midway.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    bumped = await produce(part, b"b", epoch=2, seq=0)
    assert (bumped.error, bumped.base_offset) == (ErrorCode.NONE, 1)


async def test_an_unknown_producer_is_accepted_at_any_sequence_as_kafka_does(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    result = await produce(part, b"a", seq=42)
    assert result.error == ErrorCode.NONE
    assert (await produce(part, b"b", seq=44)).error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


async def test_sequence_wraps_after_int32_max(tmp_path):
    part = make_data(tmp_path, topics={"t": 1}).partition("t", 0)
    assert (await produce(part, b"a", seq=2**31 - 1)).error == ErrorCode.NONE
    assert (await produce(part, b"b", seq=0)).error == ErrorCode.NONE


async def test_producer_state_is_rebuilt_from_the_log_after_a_restart(tmp_path):
    data = make_data(tmp_path, topics={"t": 1})
    part = data.partition("t", 0)
    await produce(part, b"a", b"b", seq=0)
    await produce(part, b"c", seq=2)
    await produce(part, b"z", pid=8, epoch=3, seq=0)
    data.close()
    part = make_data(tmp_path).partition("t", 0)
    retry = await produce(part, b"c", seq=2)
    assert (retry.error, retry.base_offset) == (ErrorCode.NONE, 2)
    assert (await produce(part, b"d", seq=4)).error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert (await produce(part, b"y", pid=8, epoch=2, seq=1)).error == ErrorCode.INVALID_PRODUCER_EPOCH
    assert (await produce(part, b"d", seq=3)).base_offset == 4


def test_producer_ids_never_repeat_across_restarts(tmp_path):
    first = ProducerIdManager(tmp_path)
    handed_out = {first.next_id() for _ in range(3)}
    second = ProducerIdManager(tmp_path)  # restart (clean or not): starts after the reserved block
    later = second.next_id()
    assert later not in handed_out and later > max(handed_out)
    assert len({second.next_id() for _ in range(2000)}) == 2000
