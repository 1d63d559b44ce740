"""producer.id.expiration.ms (ProducerStateManager.removeExpiredProducers and UnifiedLog's
periodic check), on the injected clock: an idle producer is forgotten at the first check at or
after its expiry, one with an open transaction never is, and a forgotten producer's next batch is
taken at its sequence (no state: KIP-360)."""

from __future__ import annotations

import trio

from coordinator.broker.producer_expiry import ProducerExpiry
from coordinator.runtime.clock import ManualClock
from protocol.errors import ErrorCode
from tests.coordinator.broker.conftest import batch, make_data

EXPIRY_MS, CHECK_MS = 60_000, 10_000


async def test_idle_producers_are_forgotten_at_the_check_after_their_expiry(tmp_path):
    clock = ManualClock(start_ms=1_000_000)
    data = make_data(tmp_path, clock, topics={"t": 1})
    part = data.partition("t", 0)
    expiry = ProducerExpiry(data, clock, EXPIRY_MS, CHECK_MS)
    idle = await part.append(batch(b"a", ts=1_000_000, producer_id=7, epoch=0, seq=0), 1 << 20)
    late = await part.append(batch(b"b", ts=1_030_000, producer_id=8, epoch=0, seq=0), 1 << 20)
    open_txn = await part.append(batch(b"c", ts=1_000_000, producer_id=9, epoch=0, seq=0, transactional=True), 1 << 20)
    assert {idle.error, late.error, open_txn.error} == {ErrorCode.NONE}
    clock.set_time(1_059_999)  # checks at +10 s ... +50 s: nobody is 60 s idle yet
    assert await expiry.fire_due() == 5 and set(part.producers.producers) == {7, 8, 9}
    clock.set_time(1_060_000)  # the check at +60 s: producer 7 is exactly 60 s idle
    assert await expiry.fire_due() == 1 and set(part.producers.producers) == {8, 9}
    clock.set_time(1_100_000)
    await expiry.fire_due()
    assert set(part.producers.producers) == {9}  # an open transaction keeps its producer
    # Producer 7 resumes where it was: with no state, sequence 1 is taken (as Kafka does).
    resumed = await part.append(batch(b"d", ts=1_100_000, producer_id=7, epoch=0, seq=1), 1 << 20)
    assert resumed.error == ErrorCode.NONE and part.producers.producers[7].last_seq == 1
    data.close()


async def test_the_check_runs_by_itself_on_the_clock(tmp_path, autojump_clock):
    from coordinator.runtime.clock import TrioClock

    clock = TrioClock(epoch_ms=1_000_000)
    data = make_data(tmp_path, clock, topics={"t": 1})
    part = data.partition("t", 0)
    await part.append(batch(b"a", ts=1_000_000, producer_id=7, epoch=0, seq=0), 1 << 20)
    async with trio.open_nursery() as nursery:
        await nursery.start(ProducerExpiry(data, clock, EXPIRY_MS, CHECK_MS).run)
        await trio.sleep(59)
        assert 7 in part.producers.producers
        await trio.sleep(2)  # the check at +60 s
        assert 7 not in part.producers.producers
        nursery.cancel_scope.cancel()
    data.close()
