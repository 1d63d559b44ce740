"""The single writer of one internal topic: op -> records -> append -> durable -> reply.

Kafka's CoordinatorRuntime for one process. Each partition of the topic has a shard (its state,
rebuilt from the partition's log) and a state: LOADING (COORDINATOR_LOAD_IN_PROGRESS), ACTIVE,
FAILED (COORDINATOR_NOT_AVAILABLE, reloaded from the log with backoff until it serves again).
`run_op(partition, op, params)` runs one operation synchronously on the shard (trio runs nothing
else meanwhile), appends its records at once as one batch, waits until they are durable, then
delivers every reply the op completed and returns the caller's own answer (awaiting it if it
parked). Timers run through the same path, so timer-driven changes are written like any other;
nothing is appended out of the order it was applied in. The shards' kind (groups, later
transactions) comes in as a `ShardKind`, so this module knows nothing of either.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import trio

from coordinator.runtime.clock import TimerClock
from coordinator.runtime.loading import LoadStats, ReloadBackoff, replay_log
from coordinator.runtime.operation import OpContext, ParkedReply, RecordOffsets, Replayable, ShardKind
from coordinator.runtime.partition_writer import LogWriteError, PartitionWriter
from coordinator.runtime.timer_loop import TimerLoop
from coordinator.runtime.timers import ShardTimers, Timers
from protocol.errors import ErrorCode

log = logging.getLogger(__name__)

SETTLE_AHEAD_MS = 100  # session timers moved later are re-pushed in batches this wide (timers.next_wake)

S = TypeVar("S", bound=Replayable)
P = TypeVar("P")
R = TypeVar("R")
A = TypeVar("A")  # what an operation returns, before any parked reply is awaited


class PartitionState(enum.Enum):
    LOADING = "loading"
    ACTIVE = "active"
    FAILED = "failed"
    UNLOADED = "unloaded"  # no broker leads the partition (a cluster with its replicas down)


class CoordinatorUnavailable(Exception):
    """The partition cannot serve now; `error_code` is what the request gets."""

    def __init__(self, topic: str, partition: int, error_code: ErrorCode, reason: str) -> None:
        super().__init__(f"{topic}-{partition}: {reason}")
        self.partition = partition
        self.error_code = error_code


_STATE_ERRORS = {
    PartitionState.LOADING: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    PartitionState.FAILED: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    PartitionState.UNLOADED: ErrorCode.NOT_COORDINATOR,
}


class CoordinatorRuntime(Generic[S]):
    def __init__(
        self,
        kind: ShardKind[S],
        writer: PartitionWriter,
        clock: TimerClock,
        *,
        reload_backoff_ms: int = 100,
        max_reload_backoff_ms: int = 10_000,
        load_delay_ms: int = 0,
    ) -> None:
        self.kind = kind
        self.writer = writer
        self.clock = clock
        self.timers = Timers()
        self.num_partitions = writer.num_partitions
        self.stats: dict[int, LoadStats] = {}
        # The kind's shards replay every record at load and learn each one's offset (RecordOffsets).
        self._every_record = bool(getattr(kind, "replay_every_record", False))
        self.loaded = trio.Event()  # set once the partitions found on disk at start are loaded
        self._backoff = ReloadBackoff(reload_backoff_ms, max_reload_backoff_ms)
        self.load_delay_ms = load_delay_ms  # coordinator.load.delay.ms: stretches a moved partition's load
        self._moves: dict[int, int] = {}  # partition -> how many moves so far (a newer one wins)
        self._led: dict[int, bool] = {}  # partition -> whether the last move left it led
        self._held: set[int] = set()  # led here, not loaded until another process lets go (`hold`)
        self._shards: dict[int, S] = {}
        # partition -> the highest offset a durability wait returned for (everything up to it is
        # durable); forgotten when the partition unloads (a reopened log may have lost its tail).
        self._confirmed: dict[int, int] = {}
        self._states: dict[int, PartitionState] = {}
        self._timer_loop = TimerLoop(self.timers, clock, SETTLE_AHEAD_MS)
        self._states_changed = trio.Event()
        self._nursery: trio.Nursery | None = None
        for partition in writer.existing_partitions():
            self._states[partition] = PartitionState.LOADING  # before any waiter exists
        for partition in range(self.num_partitions):
            if partition not in self._states:  # no log on disk: an empty shard, active at once
                self._install(partition, kind.new_shard(partition, ShardTimers(self.timers, partition)))

    # -- what callers ask ------------------------------------------------------------------------
    def state(self, partition: int) -> PartitionState:
        return self._states[partition]

    async def settled(self, partition: int) -> PartitionState:
        """Wait until the partition is neither loading nor failed (a move or a reload is over)."""
        while self._states[partition] in (PartitionState.LOADING, PartitionState.FAILED):
            await self._states_changed.wait()
        return self._states[partition]

    def _set_state(self, partition: int, state: PartitionState) -> None:
        self._states[partition] = state
        self._states_changed.set()
        self._states_changed = trio.Event()

    def shard(self, partition: int) -> S | None:
        """The partition's shard while it is ACTIVE."""
        return self._shards.get(partition)

    def shards(self) -> list[S]:
        """The ACTIVE shards (a copy: safe to iterate from another thread)."""
        return list(self._shards.values())

    def unavailable(self, partition: int) -> CoordinatorUnavailable | None:
        """Why the partition cannot serve now, or None if it can."""
        state = self._states[partition]
        if state is PartitionState.ACTIVE:
            return None
        return CoordinatorUnavailable(self.kind.topic, partition, _STATE_ERRORS[state], state.value)

    # -- operations ------------------------------------------------------------------------------
    async def run_op(self, partition: int, op: Callable[[OpContext[S], P], R | ParkedReply[R]], params: P) -> R:
        """Run one operation and return its final, durable answer."""
        ctx, answer = self._apply(partition, op, params)
        offset = self._append(partition, ctx)
        self._tell_offsets(ctx.shard, ctx, offset)
        self._timer_loop.scheduled()
        if offset > self._confirmed.get(partition, -1) or offset == -2:
            await self._await_durable(partition, ctx, offset)
        else:  # nothing of it pending (a heartbeat after the last write was confirmed): no wait
            self._completed(ctx)
        if isinstance(answer, ParkedReply):
            return await answer.wait()
        return answer

    def run_op_unawaited(self, partition: int, op: Callable[[OpContext[S], P], R], params: P) -> R:
        """Run an operation whose records need no wait: appended now, made durable by whatever
        next syncs the partition (a later op's wait, a flush, a checkpoint, the close). Only for
        records that a crash may lose harmlessly because the log already holds what rebuilds
        them (a transaction's Complete after its durable decision and markers); so the op may
        neither complete parked replies nor defer work."""
        ctx, answer = self._apply(partition, op, params)
        if ctx.completions or ctx.deferred:
            self.fail(partition, "an unawaited operation completed or deferred work")
            raise RuntimeError("an unawaited operation may not complete replies or defer work")
        if self._append(partition, ctx) == -2:
            code = ErrorCode.COORDINATOR_NOT_AVAILABLE
            raise CoordinatorUnavailable(self.kind.topic, partition, code, "append failed")
        self._timer_loop.scheduled()
        return answer

    def _apply(self, partition: int, op: Callable[[OpContext[S], P], A], params: P) -> tuple[OpContext[S], A]:
        """Run `op` on the partition's shard now; its records are in the context, not yet appended."""
        shard = self._shards.get(partition)
        if shard is None:
            raise self.unavailable(partition) or RuntimeError("active partition without shard")
        ctx = OpContext(shard, self.clock.time_ms())
        try:
            return ctx, op(ctx, params)
        except Exception:
            # A bug, and the shard may hold half an op: the log is the truth, reload from it.
            log.exception("operation %s failed on %s-%s", getattr(op, "__name__", op), self.kind.topic, partition)
            self.fail(partition, "an operation failed")
            raise

    def _append(self, partition: int, ctx: OpContext[S]) -> int:
        """Append the op's records now, in the order ops were applied. -2: the append failed."""
        try:
            if ctx.producer is None and ctx.marker is None:
                return self.writer.append(partition, ctx.records)
            return self.writer.append(partition, ctx.records, producer=ctx.producer, marker=ctx.marker)
        except LogWriteError as exc:
            self.fail(partition, str(exc))
            return -2

    def _tell_offsets(self, shard: S, ctx: OpContext[S], last_offset: int) -> None:
        if self._every_record and last_offset >= 0 and ctx.records and isinstance(shard, RecordOffsets):
            shard.written(ctx.records, last_offset - len(ctx.records) + 1)

    async def _await_durable(self, partition: int, ctx: OpContext[S], offset: int) -> None:
        error: CoordinatorUnavailable | None = None
        if offset == -2:
            error = CoordinatorUnavailable(
                self.kind.topic, partition, ErrorCode.COORDINATOR_NOT_AVAILABLE, "append failed"
            )
        elif offset > self._confirmed.get(partition, -1):
            # (Not above: an op without records whose partition has nothing pending, a heartbeat
            # after the last write was confirmed, is answered at once, as Kafka's CoordinatorRuntime
            # completes a write op without records unless a write is still pending.)
            try:
                await self.writer.wait_durable(partition, offset)
                if offset > self._confirmed.get(partition, -1):  # (a later write may have confirmed more)
                    self._confirmed[partition] = offset
            except LogWriteError as exc:
                self.fail(partition, str(exc))
                error = CoordinatorUnavailable(
                    self.kind.topic, partition, ErrorCode.COORDINATOR_NOT_AVAILABLE, str(exc)
                )
        if error is not None:
            ctx.abandon(error)
            raise error
        self._completed(ctx)

    def _completed(self, ctx: OpContext[S]) -> None:
        """The op's output is durable: its parked replies answered, its deferred work started."""
        if ctx.completions:  # (most ops, a heartbeat or a commit, complete nothing and defer nothing)
            ctx.deliver()
        if ctx.deferred:
            self._start_deferred(ctx)

    def _start_deferred(self, ctx: OpContext[S]) -> None:
        """Start the work an op deferred until its output was durable (a transaction's markers)."""
        jobs, ctx.deferred = ctx.deferred, []
        for job in jobs:
            if self._nursery is None:
                log.warning("%s: dropping deferred work %r: the runtime is not running", self.kind.topic, job)
                continue
            self._nursery.start_soon(job, self)

    # -- loading, failing, unloading ------------------------------------------------------------
    async def load_all(self) -> None:
        """Load every partition that is still LOADING (those found on disk at start)."""
        for partition in [p for p, s in self._states.items() if s is PartitionState.LOADING]:
            try:
                await self.load(partition)
            except Exception:
                self._schedule_reload(partition)
        self.loaded.set()

    async def load(self, partition: int) -> LoadStats:
        """Drop whatever memory holds for the partition and replay its log into a new shard."""
        self._unload(partition, PartitionState.LOADING)
        shard = self.kind.new_shard(partition, ShardTimers(self.timers, partition))
        self.writer.pause_cleaning(partition)  # no swap under the loader's reads
        try:
            stats = await replay_log(
                self.writer, self.kind.decode, partition, shard, self.clock, every_record=self._every_record
            )
        except Exception:
            self._set_state(partition, PartitionState.FAILED)
            raise
        finally:
            self.writer.resume_cleaning(partition)
        self._install(partition, shard)
        self.stats[partition] = stats
        return stats

    def _install(self, partition: int, shard: S) -> None:
        self._shards[partition] = shard
        self._set_state(partition, PartitionState.ACTIVE)
        ctx = OpContext(shard, self.clock.time_ms())
        self.kind.on_loaded(ctx)
        self._start_deferred(ctx)  # (the transactions a moved coordinator must complete)
        self._timer_loop.wake()

    def _unload(self, partition: int, state: PartitionState) -> None:
        self._confirmed.pop(partition, None)
        shard = self._shards.pop(partition, None)
        self._set_state(partition, state)
        self.timers.cancel_partition(partition)
        if shard is not None:
            self.kind.on_unloaded(shard)

    def relocate(self, partition: int, *, led: bool) -> None:
        """The partition's leader changed (a coordinator move, a broker down or up): the shard is
        dropped at once (parked requests learn NOT_COORDINATOR) and, if a broker leads the
        partition now, loaded again from the log after `load_delay_ms` — meanwhile requests to
        the new coordinator get COORDINATOR_LOAD_IN_PROGRESS, as in Kafka."""
        move = self._moves[partition] = self._moves.get(partition, 0) + 1
        self._led[partition] = led
        self._held.discard(partition)
        self._unload(partition, PartitionState.LOADING if led else PartitionState.UNLOADED)
        if led and self._nursery is not None:
            self._nursery.start_soon(self._load_moved, partition, move)

    def hold(self, partition: int) -> None:
        """cluster.processes: this broker leads the partition now, but another broker process may
        still hold its log. Requests get COORDINATOR_LOAD_IN_PROGRESS, as from a Kafka coordinator
        still loading it (not NOT_COORDINATOR: clients retry without a new lookup); nothing loads
        (a load in flight is dropped) until `relocate(led=True)`."""
        self._moves[partition] = self._moves.get(partition, 0) + 1
        self._led[partition] = False  # not served here yet
        self._held.add(partition)
        self._unload(partition, PartitionState.LOADING)

    def _not_served(self, partition: int) -> PartitionState:
        """The state of a partition this process does not serve now: held (loading) or unloaded."""
        return PartitionState.LOADING if partition in self._held else PartitionState.UNLOADED

    async def _load_moved(self, partition: int, move: int) -> None:
        if self.load_delay_ms > 0:
            await trio.sleep(self.load_delay_ms / 1000)
        if self._moves.get(partition) != move or self._states.get(partition) is not PartitionState.LOADING:
            return  # moved again meanwhile: that move loads it
        try:
            await self.load(partition)
        except Exception:
            if self._moves.get(partition) == move:
                self._schedule_reload(partition)
            elif not self._led.get(partition, True):  # moved away while loading (its log may be
                self._set_state(partition, self._not_served(partition))  # another process's now): no reload
            return
        if self._moves.get(partition) != move and not self._led.get(partition, True):
            self._unload(partition, self._not_served(partition))  # moved away while loading: not served here

    def fail(self, partition: int, reason: str) -> None:
        """The partition's log or memory can no longer be trusted: stop serving it and reload it
        from the log with backoff until that succeeds."""
        if self._states.get(partition) is PartitionState.FAILED:
            return
        log.warning("%s-%s failed (%s): reloading it from its log", self.kind.topic, partition, reason)
        self._unload(partition, PartitionState.FAILED)
        self._schedule_reload(partition)

    def _schedule_reload(self, partition: int) -> None:
        self._set_state(partition, PartitionState.FAILED)
        if self._nursery is not None:
            self._nursery.start_soon(self._reload, partition)

    async def _reload(self, partition: int) -> None:
        delay_ms = self._backoff.first_delay(partition)
        attempts = 0
        while self._states.get(partition) is PartitionState.FAILED:
            await trio.sleep(delay_ms / 1000)
            attempts += 1
            try:
                await self.load(partition)
            except Exception as exc:
                if attempts == 1:  # logged once; retried quietly, each wait twice the last
                    log.warning("reloading %s-%s failed, retrying with backoff: %r", self.kind.topic, partition, exc)
                delay_ms = self._backoff.next_delay(delay_ms)
                self._set_state(partition, PartitionState.FAILED)
                continue
            self._backoff.served(partition, delay_ms)
            log.warning("%s-%s serves again after %d reload attempt(s)", self.kind.topic, partition, attempts)

    # -- the background work ------------------------------------------------------------------
    async def run(self, *, load: bool = True, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Timers and reloads until cancelled; then the topic's logs are closed cleanly (the
        LogManager compacts, checkpoints and flushes them meanwhile). With load=False the
        partitions on disk stay LOADING until `await runtime.load_all()` (tests use it to
        observe COORDINATOR_LOAD_IN_PROGRESS)."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                for partition, state in self._states.items():
                    if state is PartitionState.FAILED:
                        nursery.start_soon(self._reload, partition)
                if load:
                    nursery.start_soon(self.load_all)
                task_status.started()

                async def fire() -> None:  # (durability waits go on in the nursery meanwhile)
                    self._fire_due_timers(nursery)

                await self._timer_loop.run(fire)
        finally:
            self._nursery = None
            self.writer.close()

    def _fire_due_timers(self, nursery: trio.Nursery) -> int:
        fired = 0
        while (timer := self.timers.pop_expired(self.clock.time_ms())) is not None:
            key = timer.key  # (partition, ...): scheduled through the shard's ShardTimers
            shard = self._shards.get(key[0]) if isinstance(key, tuple) else None
            if shard is None:
                continue
            ctx = OpContext(shard, self.clock.time_ms())
            try:
                timer.action(ctx)
            except Exception:
                log.exception("timer %r failed", key)
                self.fail(shard.partition, "a timer failed")
                continue
            fired += 1
            offset = self._append(shard.partition, ctx)
            self._tell_offsets(shard, ctx, offset)
            nursery.start_soon(self._finish_timer, shard.partition, ctx, offset)
        return fired

    async def fire_due(self) -> int:
        """Fire every timer due now and wait until their records are durable (the manual clock's
        advance calls this at each deadline, so effects are visible when it returns)."""
        async with trio.open_nursery() as nursery:
            return self._fire_due_timers(nursery)

    async def _finish_timer(self, partition: int, ctx: OpContext[S], offset: int) -> None:
        try:
            await self._await_durable(partition, ctx, offset)
        except CoordinatorUnavailable:
            pass  # the partition failed and reloads; the timer's effect is what the log says
