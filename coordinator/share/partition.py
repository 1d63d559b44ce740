"""One share-partition: a share group's view of one topic-partition (Kafka's SharePartition).

It owns the share-partition start offset (SPSO: everything below is done), the end offset (the
last offset in flight; the next to fetch when nothing is) and the in-flight batches between them
(inflight.py). Everything here is synchronous and reads no clock: the manager (manager.py) gives
it the time, holds its lock across a persist, and persists what a change returns.

A change that must be durable (acknowledge, release, lock expiry) is applied in memory at once and
returned as a `Pending`: the state batches to write and how to undo them. The manager writes them
through the share coordinator, then `commit`s (the start offset moves past the leading terminal
records, Kafka's maybeUpdateCachedStateAndOffsets) or `rollback`s (Kafka's
rollbackOrProcessStateUpdates). Acquisition is never persisted, as in Kafka: after a restart, what
was acquired and not acknowledged is available again with its last persisted delivery count.
Acquisition itself is in acquire.py.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from coordinator.share.inflight import EMPTY_MEMBER, DeliveryCount, InFlightBatch, InFlightState, RecordState, Saved
from coordinator.share.persister import SharePartitionKey, ShareState, StateBatch
from protocol.errors import ErrorCode

# Acknowledge types on the wire (Kafka AcknowledgeType; 0 is a gap: the offset has no record).
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
_ACK_STATE = {
    GAP: RecordState.ARCHIVED,
    ACCEPT: RecordState.ACKNOWLEDGED,
    RELEASE: RecordState.AVAILABLE,
    REJECT: RecordState.ARCHIVED,
}


class PartitionState(enum.Enum):
    """Kafka SharePartitionState: requests are served only while ACTIVE."""

    EMPTY = "Empty"
    INITIALIZING = "Initializing"
    ACTIVE = "Active"
    FAILED = "Failed"
    FENCED = "Fenced"


class AckError(Exception):
    """An acknowledgement Kafka refuses for the whole partition (INVALID_RECORD_STATE,
    INVALID_REQUEST); the message is Kafka's."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class AckBatch:
    """One acknowledgement batch of a request (Kafka ShareAcknowledgementBatch)."""

    first_offset: int
    last_offset: int
    types: tuple[int, ...]  # one type for the whole batch, or one per offset


@dataclass
class Pending:
    """A change applied in memory that still has to be written (see the module docstring)."""

    batches: list[StateBatch] = field(default_factory=list)
    saved: list[tuple[InFlightState, Saved]] = field(default_factory=list)
    renewed: list[tuple[int, int, int]] = field(default_factory=list)  # (first, last, new deadline)
    released: bool = False  # some records became AVAILABLE: waiting fetches may acquire them

    def change(self, first: int, last: int, state: InFlightState) -> None:
        self.batches.append(StateBatch(first, last, int(state.state), state.delivery_count))
        if state.state is RecordState.AVAILABLE:
            self.released = True


class SharePartition:
    def __init__(self, key: SharePartitionKey, topic: str, leader_epoch: int, max_in_flight: int) -> None:
        self.key = key
        self.topic = topic
        self.leader_epoch = leader_epoch
        self.max_in_flight = max_in_flight  # group.share.partition.max.record.locks
        self.state = PartitionState.EMPTY
        self.state_epoch = 0
        self.start_offset = 0
        self.end_offset = 0
        self.batches: list[InFlightBatch] = []  # in offset order
        self._firsts: list[int] = []  # each batch's first offset, for bisect
        self.find_next_fetch_offset = False

    # -- loading ----------------------------------------------------------------------------
    def initialize(self, state: ShareState, start_offset: int) -> None:
        """Kafka maybeInitialize's completion: `start_offset` is the persisted one, or what
        share.auto.offset.reset gave for a never-used share-partition. Offsets between the start
        and the last persisted batch that no batch covers were in flight and not acknowledged
        when the state was written: they are available again (kgc fills them in as AVAILABLE
        batches with delivery count 0; Kafka tracks the same offsets with its read gap window)."""
        self.state_epoch = state.state_epoch
        self.start_offset = start_offset
        self.batches.clear()
        self._firsts.clear()
        expected = start_offset
        for b in state.batches:
            if b.last_offset < start_offset:
                continue
            first = max(b.first_offset, start_offset)
            if first > expected:
                self._append(InFlightBatch(expected, first - 1, InFlightState(RecordState.AVAILABLE, 0)))
            loaded = InFlightState(RecordState(b.delivery_state), b.delivery_count)
            self._append(InFlightBatch(first, b.last_offset, loaded))
            expected = b.last_offset + 1
        if self.batches:
            self.find_next_fetch_offset = True
            self.end_offset = self.batches[-1].last
            self.advance_start_offset()
        else:
            self.end_offset = start_offset
        self.state = PartitionState.ACTIVE

    # -- the cache ----------------------------------------------------------------------------
    def _append(self, batch: InFlightBatch) -> None:
        self.batches.append(batch)
        self._firsts.append(batch.first)

    def insert(self, batch: InFlightBatch) -> None:
        i = bisect.bisect_left(self._firsts, batch.first)
        self.batches.insert(i, batch)
        self._firsts.insert(i, batch.first)

    def floor(self, offset: int) -> int | None:
        """Index of the batch with the greatest first offset <= `offset`."""
        i = bisect.bisect_right(self._firsts, offset) - 1
        return i if i >= 0 else None

    def between(self, low: int, high: int) -> list[InFlightBatch]:
        """Batches whose first offset is in [low, high] (Kafka's cachedState.subMap)."""
        i = bisect.bisect_left(self._firsts, low)
        j = bisect.bisect_right(self._firsts, high)
        return self.batches[i:j]

    def in_flight(self) -> int:
        """Kafka numInFlightRecords."""
        return self.end_offset - self.start_offset + 1 if self.batches else 0

    def states_from_start(self) -> Iterator[tuple[int, int, InFlightState]]:
        for batch in self.batches:
            for first, last, state in batch.states():
                if last >= self.start_offset:
                    yield max(first, self.start_offset), last, state

    def delivery_complete_count(self, start: int | None = None) -> int:
        """KIP-1226: terminal records at or past the start offset (what lag subtracts)."""
        low = self.start_offset if start is None else start
        done = [(first, last) for first, last, s in self.states_from_start() if s.state.terminal and last >= low]
        return sum(last - max(first, low) + 1 for first, last in done)

    # -- where the next fetch reads -----------------------------------------------------------
    def next_fetch_offset(self) -> int:
        """Kafka nextFetchOffset: after the end offset, unless something earlier is available
        again (released, its lock expired, or left available by a restart)."""
        fresh = not self.batches or self.start_offset > self.batches[-1].last
        if not self.find_next_fetch_offset:
            return self.end_offset if fresh else self.end_offset + 1
        if fresh:
            self.find_next_fetch_offset = False
            return self.end_offset
        for batch in self.batches:
            for first, _last, state in batch.states():
                if state.state is RecordState.AVAILABLE and first >= self.start_offset:
                    return first
        self.find_next_fetch_offset = False
        return self.end_offset + 1

    def can_acquire(self) -> bool:
        """Kafka canAcquireRecords."""
        return self.next_fetch_offset() != self.end_offset + 1 or self.in_flight() < self.max_in_flight

    # -- acknowledgements -----------------------------------------------------------------------
    def acknowledge(
        self, member_id: str, acks: Sequence[AckBatch], limit: int, renew_deadline_ms: int | None = None
    ) -> Pending:
        """Kafka SharePartition.acknowledge for one partition's batches, all or nothing: on the
        first refusal everything already changed is undone and AckError raised."""
        pending = Pending()
        try:
            for ack in acks:
                if ack.last_offset < self.start_offset:
                    continue  # already done: Kafka skips it
                for batch in self._ack_targets(ack):
                    if batch.last < self.start_offset:
                        continue
                    self._acknowledge_batch(member_id, ack, batch, limit, renew_deadline_ms, pending)
        except AckError:
            self.rollback(pending)
            raise
        return pending

    def _ack_targets(self, ack: AckBatch) -> list[InFlightBatch]:
        """Kafka fetchSubMapForAcknowledgementBatch."""
        i = self.floor(ack.first_offset)
        if i is None:
            if ack.first_offset < self.start_offset <= ack.last_offset:
                i = self.floor(self.start_offset)
            if i is None:
                raise AckError(
                    ErrorCode.INVALID_RECORD_STATE,
                    "Batch record not found. The request batch offsets are not found in the cache.",
                )
        targets = self.between(self.batches[i].first, ack.last_offset)
        if targets[-1].last < ack.first_offset:
            past = "Batch record not found. The first offset in request is past acquired records."
            raise AckError(ErrorCode.INVALID_REQUEST, past)
        if ack.last_offset > targets[-1].last:
            past = "Batch record not found. The last offset in request is past acquired records."
            raise AckError(ErrorCode.INVALID_REQUEST, past)
        return targets

    def _acknowledge_batch(
        self,
        member_id: str,
        ack: AckBatch,
        batch: InFlightBatch,
        limit: int,
        renew_deadline_ms: int | None,
        pending: Pending,
    ) -> None:
        whole = batch.batch_state
        if whole is not None:
            if whole.member_id == EMPTY_MEMBER:
                raise AckError(
                    ErrorCode.INVALID_RECORD_STATE,
                    "The batch cannot be acknowledged. The batch is not in the acquired state.",
                )
            if whole.member_id != member_id:
                raise AckError(ErrorCode.INVALID_RECORD_STATE, "Member is not the owner of batch record")
        full_match = batch.first >= ack.first_offset and batch.last <= ack.last_offset
        start_inside = batch.first < self.start_offset <= batch.last
        if whole is not None and full_match and len(ack.types) == 1 and not start_inside:
            if whole.state is not RecordState.ACQUIRED:
                raise AckError(
                    ErrorCode.INVALID_RECORD_STATE,
                    "The batch cannot be acknowledged. The batch is not in the acquired state.",
                )
            self._apply(whole, batch.first, batch.last, ack.types[0], limit, renew_deadline_ms, pending)
            return
        if whole is not None and whole.state is not RecordState.ACQUIRED:
            raise AckError(
                ErrorCode.INVALID_RECORD_STATE,
                "The batch cannot be acknowledged. The subset batch is not in the acquired state.",
            )
        for offset, state in batch.split().items():
            if offset < ack.first_offset or offset < self.start_offset:
                continue
            if offset > ack.last_offset:
                break
            if state.state is not RecordState.ACQUIRED:
                raise AckError(
                    ErrorCode.INVALID_RECORD_STATE, "The offset cannot be acknowledged. The offset is not acquired."
                )
            if state.member_id != member_id:
                raise AckError(ErrorCode.INVALID_RECORD_STATE, "Member is not the owner of offset")
            kind = ack.types[offset - ack.first_offset] if len(ack.types) > 1 else ack.types[0]
            self._apply(state, offset, offset, kind, limit, renew_deadline_ms, pending)

    def _apply(
        self,
        state: InFlightState,
        first: int,
        last: int,
        kind: int,
        limit: int,
        renew_deadline_ms: int | None,
        pending: Pending,
    ) -> None:
        pending.saved.append((state, state.save()))
        if kind == RENEW:  # KIP-1222: a new lock, nothing persisted
            if renew_deadline_ms is not None:
                state.lock_deadline_ms = renew_deadline_ms
                pending.renewed.append((first, last, renew_deadline_ms))
            return
        if not state.transition(_ACK_STATE[kind], DeliveryCount.NO_OP, limit):
            raise AckError(ErrorCode.INVALID_RECORD_STATE, "Unable to acknowledge records for the batch")
        pending.change(first, last, state)

    # -- releases: a member's session closed, or locks expired ----------------------------------
    def release_member(self, member_id: str, limit: int) -> Pending:
        """Kafka releaseAcquiredRecords: what the member holds goes back unread (its delivery
        count decreases); below the start offset it is archived."""
        pending = Pending()
        for batch in self.batches:
            whole = batch.batch_state
            straddles = batch.first < self.start_offset <= batch.last
            if whole is not None and whole.state is RecordState.ACQUIRED and straddles:
                batch.split()
            for first, last, state in batch.states():
                if state.state is not RecordState.ACQUIRED or state.member_id != member_id:
                    continue
                pending.saved.append((state, state.save()))
                target = RecordState.ARCHIVED if last < self.start_offset else RecordState.AVAILABLE
                state.transition(target, DeliveryCount.DECREASE, limit)
                pending.change(first, last, state)
        if pending.released:
            self.find_next_fetch_offset = True
        return pending

    def expire_locks(self, first: int, last: int, now_ms: int, limit: int) -> Pending:
        """Kafka releaseAcquisitionLockOnTimeout for [first, last]: records still ACQUIRED whose
        lock is due become AVAILABLE (ARCHIVED at the delivery limit, or below the start offset).
        Applied whatever the persist's outcome, as in Kafka."""
        pending = Pending()
        for batch in self.between(self._floor_first(first), last):
            whole = batch.batch_state
            partial = batch.first < first or batch.last > last
            if whole is not None and (partial or batch.first < self.start_offset <= batch.last):
                if whole.state is RecordState.ACQUIRED:
                    batch.split()
            for f, ln, state in batch.states():
                if f < first or ln > last or state.state is not RecordState.ACQUIRED:
                    continue
                if state.lock_deadline_ms is None or state.lock_deadline_ms > now_ms:
                    continue  # renewed, or acquired again since
                target = RecordState.ARCHIVED if ln < self.start_offset else RecordState.AVAILABLE
                state.transition(target, DeliveryCount.NO_OP, limit)
                pending.change(f, ln, state)
        if pending.released:
            self.find_next_fetch_offset = True
        return pending

    def _floor_first(self, offset: int) -> int:
        i = self.floor(offset)
        return offset if i is None else self.batches[i].first

    # -- after a write -------------------------------------------------------------------------
    def rollback(self, pending: Pending) -> None:
        for state, saved in reversed(pending.saved):
            state.restore(saved)
            if state.state is RecordState.AVAILABLE:
                self.find_next_fetch_offset = True
        pending.saved.clear()

    def commit(self, pending: Pending) -> None:
        if pending.released:
            self.find_next_fetch_offset = True
        self.advance_start_offset()

    def advance_start_offset(self) -> bool:
        """Kafka maybeUpdateCachedStateAndOffsets: move the start past the terminal records that
        follow it; drop batches that end up wholly below it. True if anything moved."""
        last_done = self._last_terminal_from_start()
        if last_done < self.start_offset:
            return False
        if last_done == self.batches[-1].last:
            self.start_offset = self.end_offset = last_done + 1
            self.batches.clear()
            self._firsts.clear()
            return True
        i = self.floor(last_done)
        assert i is not None
        if last_done == self.batches[i].last:
            self.start_offset = max(self.start_offset, self.batches[i + 1].first)
            drop = i + 1
        else:
            self.start_offset = max(self.start_offset, last_done + 1)
            drop = i
        del self.batches[:drop]
        del self._firsts[:drop]
        return True

    def prospective_start_offset(self) -> int:
        """The start offset `commit` would leave (what a write persists)."""
        last_done = self._last_terminal_from_start()
        if last_done < self.start_offset:
            return self.start_offset
        i = self.floor(last_done)
        assert i is not None
        if last_done == self.batches[i].last and i + 1 < len(self.batches):
            return max(self.start_offset, self.batches[i + 1].first)
        return max(self.start_offset, last_done + 1)

    def _last_terminal_from_start(self) -> int:
        last = -1
        for _first, end, state in self.states_from_start():
            if not state.state.terminal:
                break
            last = end  # gaps between batches (compacted away) do not stop the start offset
        return last

    # -- the log moved under us ----------------------------------------------------------------
    def update_log_start_offset(self, log_start: int) -> None:
        """Kafka updateCacheAndOffsets: records deleted from the log (DeleteRecords, retention)
        are gone; available ones below the new log start are archived, the start moves there."""
        if log_start <= self.start_offset:
            return
        for batch in self.between(self._floor_first(self.start_offset), log_start - 1):
            whole = batch.batch_state
            if whole is not None and whole.state is RecordState.AVAILABLE and batch.last >= log_start:
                batch.split()
            for _first, last, state in batch.states():
                if last < log_start and state.state is RecordState.AVAILABLE:
                    state.state = RecordState.ARCHIVED
        self.start_offset = log_start
        if not self.batches or self.end_offset < log_start:
            self.end_offset = log_start
        self.find_next_fetch_offset = True
        self.advance_start_offset()
