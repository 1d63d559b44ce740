"""SharePartition and acquire without sockets, files or clocks: Kafka's SharePartitionTest
scenarios for acquisition, acknowledgement, release, lock expiry, the delivery count limit, the
in-flight limit, loading persisted state and the start offset."""

from __future__ import annotations

import uuid

import pytest

from coordinator.share.acquire import Acquired, AcquireRequest, acquire
from coordinator.share.fetched import FetchedBatch
from coordinator.share.inflight import RecordState
from coordinator.share.partition import ACCEPT, GAP, REJECT, RELEASE, RENEW, AckBatch, AckError, SharePartition
from coordinator.share.persister import SharePartitionKey, ShareState, StateBatch
from protocol.errors import ErrorCode

KEY = SharePartitionKey("g", uuid.UUID(int=7), 0)


def partition(start: int = 0, batches: tuple[StateBatch, ...] = (), max_in_flight: int = 2000) -> SharePartition:
    sp = SharePartition(KEY, "t", 0, max_in_flight)
    sp.initialize(ShareState(0, start, 0, -1, batches), start)
    return sp


def log(*ranges: tuple[int, int], control: tuple[int, ...] = ()) -> list[FetchedBatch]:
    return [FetchedBatch(f, ln, f in control, f in control, 1 if f in control else -1, 0, 0) for f, ln in ranges]


def req(member: str = "a", offset: int = 0, max_records: int = 500, batch_size: int = 500, **kw) -> AcquireRequest:
    return AcquireRequest(
        member,
        offset,
        max_records,
        batch_size,
        kw.get("record_limit", False),
        kw.get("deadline", 1000),
        kw.get("limit", 5),
    )


def states(sp: SharePartition) -> list[tuple[int, int, str, int, str]]:
    return [(f, ln, s.state.name, s.delivery_count, s.member_id) for b in sp.batches for f, ln, s in b.states()]


def per_offset(sp: SharePartition) -> list[tuple[int, str, int, str]]:
    """States offset by offset: equal however batches happen to be split."""
    return [
        (o, s.state.name, s.delivery_count, s.member_id)
        for b in sp.batches
        for f, ln, s in b.states()
        for o in range(f, ln + 1)
    ]


def test_fresh_records_are_acquired_in_whole_batches():
    sp = partition()
    assert acquire(sp, req(max_records=3), log((0, 4), (5, 9))) == [Acquired(0, 4, 1)]
    assert (sp.start_offset, sp.end_offset, sp.next_fetch_offset()) == (0, 4, 5)
    assert acquire(sp, req("b", offset=5), log((5, 9))) == [Acquired(5, 9, 1)]
    assert states(sp) == [(0, 4, "ACQUIRED", 1, "a"), (5, 9, "ACQUIRED", 1, "b")]


def test_batch_size_splits_at_batch_boundaries():
    sp = partition()
    got = acquire(sp, req(batch_size=4), log((0, 2), (3, 5), (6, 8), (9, 9)))
    assert got == [Acquired(0, 5, 1), Acquired(6, 9, 1)]


def test_record_limit_mode_acquires_exactly_max_records():
    sp = partition()
    assert acquire(sp, req(max_records=3, record_limit=True), log((0, 9))) == [Acquired(0, 2, 1)]
    assert sp.next_fetch_offset() == 3
    assert acquire(sp, req("b", offset=3, max_records=3, record_limit=True), log((0, 9))) == [Acquired(3, 5, 1)]


def test_accept_moves_the_start_offset_and_empties_the_cache():
    sp = partition()
    acquire(sp, req(), log((0, 9)))
    pending = sp.acknowledge("a", [AckBatch(0, 9, (ACCEPT,))], 5)
    assert [(b.first_offset, b.last_offset, b.delivery_state) for b in pending.batches] == [(0, 9, 2)]
    assert sp.prospective_start_offset() == 10
    sp.commit(pending)
    assert (sp.start_offset, sp.end_offset, sp.batches, sp.next_fetch_offset()) == (10, 10, [], 10)


def test_release_makes_records_available_again_with_a_higher_delivery_count():
    sp = partition()
    acquire(sp, req(), log((0, 9)))
    sp.commit(sp.acknowledge("a", [AckBatch(0, 9, (ACCEPT,) * 5 + (RELEASE,) * 5)], 5))
    assert sp.start_offset == 5 and sp.next_fetch_offset() == 5
    assert acquire(sp, req("b", offset=5), log((0, 9))) == [Acquired(5, 9, 2)]


def test_released_at_the_delivery_limit_is_archived():
    sp = partition()
    for member in ("a", "b"):
        acquire(sp, req(member, offset=0, limit=2), log((0, 1)))
        sp.commit(sp.acknowledge(member, [AckBatch(0, 1, (RELEASE,))], 2))
    assert sp.batches == [] and sp.start_offset == 2  # delivered twice, released: archived


def test_reject_and_gap_archive():
    sp = partition()
    acquire(sp, req(), log((0, 3)))
    sp.commit(sp.acknowledge("a", [AckBatch(0, 3, (REJECT, GAP, ACCEPT, RELEASE))], 5))
    assert sp.start_offset == 3
    assert [(f, s.state.name) for f, _, s in sp.states_from_start()] == [(3, "AVAILABLE")]
    # the batch stays cached until all of it is done (Kafka removes whole batches only)
    assert states(sp)[:3] == [(0, 0, "ARCHIVED", 1, ""), (1, 1, "ARCHIVED", 1, ""), (2, 2, "ACKNOWLEDGED", 1, "")]


@pytest.mark.parametrize(
    ("member", "ack", "code"),
    [
        ("b", AckBatch(0, 4, (ACCEPT,)), ErrorCode.INVALID_RECORD_STATE),  # acquired by "a", not "b"
        ("a", AckBatch(20, 21, (ACCEPT,)), ErrorCode.INVALID_REQUEST),  # past what is in flight
        ("a", AckBatch(8, 12, (ACCEPT,)), ErrorCode.INVALID_REQUEST),
    ],
)
def test_refused_acknowledgements_change_nothing(member, ack, code):
    sp = partition()
    acquire(sp, req(), log((0, 9)))
    before = per_offset(sp)
    with pytest.raises(AckError) as caught:
        sp.acknowledge(member, [AckBatch(0, 0, (ACCEPT,)), ack] if member == "a" else [ack], 5)
    assert caught.value.code == code
    assert per_offset(sp) == before


def test_acknowledging_available_records_is_invalid_record_state():
    sp = partition()
    acquire(sp, req(), log((0, 9)))
    sp.commit(sp.acknowledge("a", [AckBatch(0, 9, (RELEASE,))], 5))
    with pytest.raises(AckError) as caught:
        sp.acknowledge("a", [AckBatch(0, 9, (ACCEPT,))], 5)
    assert caught.value.code == ErrorCode.INVALID_RECORD_STATE


def test_a_partial_failure_rolls_back_the_earlier_batches_of_the_request():
    sp = partition()
    acquire(sp, req(), log((0, 4)))
    acquire(sp, req("b", offset=5), log((5, 9)))
    with pytest.raises(AckError):
        sp.acknowledge("a", [AckBatch(0, 4, (ACCEPT,)), AckBatch(5, 9, (ACCEPT,))], 5)
    assert states(sp) == [(0, 4, "ACQUIRED", 1, "a"), (5, 9, "ACQUIRED", 1, "b")]


def test_renew_moves_the_lock_without_a_state_change():
    sp = partition()
    acquire(sp, req(deadline=1000), log((0, 4)))
    pending = sp.acknowledge("a", [AckBatch(0, 4, (RENEW,))], 5, renew_deadline_ms=5000)
    assert pending.batches == [] and pending.renewed == [(0, 4, 5000)]
    assert sp.expire_locks(0, 4, 1000, 5).batches == []  # the old deadline no longer applies
    assert [s for *_, s in states(sp)] == ["a"]


def test_an_expired_lock_makes_records_available_or_archives_them_at_the_limit():
    sp = partition()
    acquire(sp, req(deadline=1000, limit=2), log((0, 4)))
    assert sp.expire_locks(0, 4, 999, 2).batches == []
    pending = sp.expire_locks(0, 4, 1000, 2)
    assert [(b.first_offset, b.delivery_state, b.delivery_count) for b in pending.batches] == [(0, 0, 1)]
    sp.commit(pending)
    acquire(sp, req("b", deadline=2000, limit=2), log((0, 4)))
    sp.commit(sp.expire_locks(0, 4, 2000, 2))
    assert sp.batches == [] and sp.start_offset == 5


def test_releasing_a_member_returns_its_records_unread():
    sp = partition()
    acquire(sp, req(), log((0, 4)))
    acquire(sp, req("b", offset=5), log((5, 9)))
    pending = sp.release_member("a", 5)
    assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in pending.batches] == [
        (0, 4, 0, 0)
    ]
    assert sp.next_fetch_offset() == 0


def test_the_in_flight_limit_stops_new_acquisitions():
    sp = partition(max_in_flight=10)
    acquire(sp, req(), log((0, 9)))
    assert not sp.can_acquire()
    assert acquire(sp, req("b", offset=10), log((10, 19))) == []


def test_loading_state_fills_unacknowledged_gaps_as_available():
    # 0-4 acknowledged, 5-9 never persisted (acquired when the broker died), 10-14 archived, 15-19 available x2
    sp = partition(0, (StateBatch(0, 4, 2, 1), StateBatch(10, 14, 4, 3), StateBatch(15, 19, 0, 2)))
    assert sp.start_offset == 5
    assert states(sp) == [(5, 9, "AVAILABLE", 0, ""), (10, 14, "ARCHIVED", 3, ""), (15, 19, "AVAILABLE", 2, "")]
    assert sp.next_fetch_offset() == 5
    # Kafka stops at a batch delivered often enough to be throttled (10-14, count 3 of 5), even
    # an archived one, once the fetch has acquired something.
    assert acquire(sp, req(offset=5), log((5, 9), (10, 14), (15, 19))) == [Acquired(5, 9, 1)]
    assert sp.next_fetch_offset() == 15
    assert acquire(sp, req(offset=15), log((15, 19))) == [Acquired(15, 19, 3)]


def test_control_batches_are_never_delivered():
    sp = partition()
    got = acquire(sp, req(), log((0, 3), (4, 4), (5, 8), control=(4,)))
    assert got == [Acquired(0, 3, 1), Acquired(5, 8, 1)]
    assert "ARCHIVED" in {name for _, _, name, _, _ in states(sp)}


def test_the_log_start_moving_archives_what_it_passed():
    sp = partition()
    acquire(sp, req(), log((0, 9)))
    sp.commit(sp.acknowledge("a", [AckBatch(0, 9, (RELEASE,))], 5))
    sp.update_log_start_offset(6)
    assert sp.start_offset == 6 and sp.next_fetch_offset() == 6
    assert RecordState.AVAILABLE in {s.state for b in sp.batches for _, _, s in b.states()}
