"""What an operation runs against: `OpContext` (its shard, the time, records out, deferred
replies) and `ParkedReply` (an answer a later operation or timer gives).

An operation is `op(ctx, params) -> answer`, run synchronously by the runtime. It changes its
shard in one of two ways, as Kafka's CoordinatorRuntime does: `ctx.apply(record)` writes the
record and applies it through the shard's `replay` at once, the same code that rebuilds the shard
at load (Kafka's replayRecords=true: offsets, tombstones, consumer groups, transactions;
`ctx.apply_all(records)` does the same for many, in one call);
`ctx.persist(record)` only writes a record whose source is live state the op has already changed
(Kafka's replayRecords=false: a classic group's GroupMetadata snapshot). Parked requests are
answered with `ctx.complete(reply, value)`, and the runtime delivers those values only once the
op's records are durable: "no reply before the append is durable" lives in one place; work that
must follow a durable write (a transaction's markers) is `ctx.defer(job)`, started then too.
Transactions (Kafka's scheduleTransactionalWriteOperation / scheduleTransactionCompletion): after
`ctx.transactional(pid, epoch)` the op's records are one transactional batch of that producer
and replay through the shard's `replay_transactional`; `ctx.end_transaction(...)` makes the op's
only output a COMMIT/ABORT control batch, replayed by `replay_end_transaction`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, runtime_checkable

import trio

from coordinator.observe.reasons import current_bucket
from coordinator.runtime.timers import ShardTimers

T = TypeVar("T")
_UNSET: Any = object()


class Replayable(Protocol):
    """A shard: the state of one partition of an internal topic, rebuilt from its records."""

    partition: int

    def replay(self, record: Any, now_ms: int) -> bool:
        """Apply one record; False if it was skipped (an unknown record type)."""
        ...


@runtime_checkable
class TransactionalReplayable(Protocol):
    """A shard whose topic carries transactional batches (__consumer_offsets): records of an open
    transaction wait for its marker (Kafka's replay with a producer id, replayEndTransactionMarker)."""

    def replay_transactional(self, record: Any, producer_id: int, now_ms: int) -> bool: ...
    def replay_end_transaction(self, producer_id: int, commit: bool, now_ms: int) -> None: ...


@runtime_checkable
class RecordOffsets(Protocol):
    """A shard whose kind sets `replay_every_record` (__share_group_state): it learns where each
    record it replayed sits in the log (Kafka's replay(offset, ...)), after the append and at
    load, where every record is replayed in log order (not each key's latest: a key's updates
    all count)."""

    def written(self, records: Sequence[Any], first_offset: int) -> None: ...


class EndMarker(NamedTuple):
    """The control batch an op writes instead of records (WriteTxnMarkers on a coordinator topic)."""

    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int


S = TypeVar("S", bound=Replayable)
# Work started once the op's records are durable; it is given the runtime that ran the op.
Deferred = Callable[[Any], Awaitable[None]]


class ParkedReply(Generic[T]):
    """A reply that is not known yet (a JoinGroup in the join phase, a follower's SyncGroup)."""

    __slots__ = ("_value", "_error", "_listeners", "reasons")

    def __init__(self) -> None:
        self._value: T = _UNSET
        self._error: BaseException | None = None
        self._listeners: list[Callable[[], None]] = []
        # The parking request's reasons list (observe/reasons.py), so whoever answers it can say
        # why; None when nobody is collecting.
        self.reasons = current_bucket()

    @property
    def done(self) -> bool:
        return self._value is not _UNSET or self._error is not None

    @property
    def value(self) -> T:
        """The answer; raises the error the reply failed with, if it failed."""
        if self._error is not None:
            raise self._error
        if self._value is _UNSET:
            raise RuntimeError("reply is still parked")
        return self._value

    def resolve(self, value: T) -> None:
        """Deliver the value (the runtime only; operations use ctx.complete)."""
        if self.done:
            raise RuntimeError("reply already resolved")
        self._value = value
        self._notify()

    def fail(self, error: BaseException) -> None:
        """The answer will never come (its records were not written): its waiter gets `error`."""
        if not self.done:
            self._error = error
            self._notify()

    def _notify(self) -> None:
        for listener in self._listeners:
            listener()
        self._listeners.clear()

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call `listener()` once the reply is done (at once if it already is)."""
        if self.done:
            listener()
        else:
            self._listeners.append(listener)

    async def wait(self) -> T:
        """The answer, once it is known (raises the error the reply failed with)."""
        if not self.done:
            event = trio.Event()
            self._listeners.append(event.set)
            await event.wait()
        return self.value

    def __repr__(self) -> str:
        if self._error is not None:
            return f"ParkedReply(failed: {self._error!r})"
        return f"ParkedReply({self._value!r})" if self.done else "ParkedReply(<parked>)"


class OpContext(Generic[S]):
    """One operation's view: its shard, the time it runs at, and what it produced."""

    __slots__ = ("shard", "now_ms", "records", "completions", "producer", "marker", "deferred")

    def __init__(self, shard: S, now_ms: int) -> None:
        self.shard = shard
        self.now_ms = now_ms
        self.records: list[Any] = []
        self.completions: list[tuple[ParkedReply[Any], Any]] = []
        self.producer: tuple[int, int] | None = None  # (id, epoch): the batch is transactional
        self.marker: EndMarker | None = None
        self.deferred: list[Deferred] = []

    def apply(self, record: Any) -> None:
        """Write the record and apply it to the shard now, through its one replay path."""
        if self.marker is not None:
            raise RuntimeError("an op that writes a transaction marker writes nothing else")
        self.records.append(record)
        if self.producer is None:
            self.shard.replay(record, self.now_ms)
        else:
            shard: Any = self.shard
            shard.replay_transactional(record, self.producer[0], self.now_ms)

    def apply_all(self, records: Sequence[Any]) -> None:
        """`apply` of each record in order, in one call: a shard with `replay_all` (same effect
        as its `replay` of each) takes them at once, sparing a many-partition commit the
        per-record dispatch."""
        if self.marker is not None:
            raise RuntimeError("an op that writes a transaction marker writes nothing else")
        self.records.extend(records)
        shard: Any = self.shard
        if self.producer is not None:
            for record in records:
                shard.replay_transactional(record, self.producer[0], self.now_ms)
        elif (replay_all := getattr(shard, "replay_all", None)) is not None:
            replay_all(records, self.now_ms)
        else:
            for record in records:
                shard.replay(record, self.now_ms)

    def transactional(self, producer_id: int, producer_epoch: int) -> None:
        """The op's records are written as one transactional batch of this producer."""
        if self.records:
            raise RuntimeError("declare the producer before applying records")
        self.producer = (producer_id, producer_epoch)

    def end_transaction(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int) -> None:
        """Write a COMMIT/ABORT marker for the producer (the op's only output) and replay it."""
        if self.records or self.marker is not None:
            raise RuntimeError("a transaction marker is an op's only output")
        self.marker = EndMarker(producer_id, producer_epoch, commit, coordinator_epoch)
        shard: Any = self.shard
        shard.replay_end_transaction(producer_id, commit, self.now_ms)

    def defer(self, job: Deferred) -> None:
        """Start `job(runtime)` once the op's output is durable (never if it was not written)."""
        self.deferred.append(job)

    def persist(self, record: Any) -> None:
        """Write a record that describes state the op already changed (not replayed live)."""
        self.records.append(record)

    def complete(self, reply: ParkedReply[T] | None, value: T) -> None:
        if reply is not None:
            self.completions.append((reply, value))

    def deliver(self) -> None:
        """Resolve every completed reply (call once the records are durable)."""
        for reply, value in self.completions:
            reply.resolve(value)
        self.completions.clear()

    def abandon(self, error: BaseException) -> None:
        """The records were not written: every reply this op completed fails with `error`."""
        for reply, _ in self.completions:
            reply.fail(error)
        self.completions.clear()
        self.deferred.clear()


class ShardKind(Protocol[S]):
    """What a runtime needs to know about its shards (groups, transactions)."""

    topic: str

    def new_shard(self, partition: int, timers: ShardTimers) -> S: ...
    def encode(self, record: Any) -> tuple[bytes, bytes | None]: ...
    def decode(self, key: bytes, value: bytes | None) -> Any: ...
    def on_loaded(self, ctx: OpContext[S]) -> None: ...
    def on_unloaded(self, shard: S) -> None: ...
