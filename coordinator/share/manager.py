"""The share partitions one broker leads, and everything that changes them (Kafka's
SharePartitionManager, the acquisition-lock timer and the share session cache's listeners).

A share-partition is created on the first fetch that names it and loaded from the share
coordinator (`SharePersister.read`); a never-used one starts where share.auto.offset.reset says
(latest: the high watermark; earliest: the log start; by_duration: the first record at or after
now minus the duration). Each has a trio lock, held by whatever changes it from the first read to
the durable write: acknowledgements, releases and expired locks persist their `Pending` change
through the share coordinator and then commit it (or roll it back when the write fails; an
expired lock is applied either way, as in Kafka). Locks expire on the injected clock: the timers
here fire in deadline order in `run` (system clock) or in `fire_due` (the manual clock's advance).
A share-partition whose topic-partition this broker no longer leads, at the leader epoch it was
loaded at, is dropped and answers NOT_LEADER_OR_FOLLOWER; a later fetch on a new leadership loads
it again from the share coordinator.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import trio

from coordinator.broker.offsets import list_offset
from coordinator.runtime.clock import TimerClock
from coordinator.runtime.timer_loop import TimerLoop
from coordinator.runtime.timers import Timers
from coordinator.share.inflight import RecordState
from coordinator.share.partition import AckBatch, AckError, PartitionState, Pending, SharePartition
from coordinator.share.persister import UNINITIALIZED_START_OFFSET, SharePartitionKey, SharePersister
from coordinator.share.sessions import ShareSessionCache
from coordinator.share.settings import GroupOverrides, GroupShareSettings, ShareSettings, for_group
from protocol.errors import ErrorCode

log = logging.getLogger(__name__)

# Kafka SharePartition.fetchPersisterError: what a share coordinator error means to a fetcher.
_PERSISTER_ERRORS = {
    ErrorCode.NOT_COORDINATOR: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.COORDINATOR_NOT_AVAILABLE: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.GROUP_ID_NOT_FOUND: ErrorCode.GROUP_ID_NOT_FOUND,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ErrorCode.FENCED_LEADER_EPOCH: ErrorCode.NOT_LEADER_OR_FOLLOWER,
    ErrorCode.FENCED_STATE_EPOCH: ErrorCode.NOT_LEADER_OR_FOLLOWER,
}
# Errors after which the share-partition is dropped (Kafka fencedSharePartitionHandler).
_FENCING = frozenset(
    {ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
)
_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


class PartitionLog(Protocol):
    """The log of one topic-partition as a share-partition reads it (broker/partition.py)."""

    @property
    def high_watermark(self) -> int: ...
    @property
    def log_start_offset(self) -> int: ...
    @property
    def last_stable_offset(self) -> int: ...


class Logs(Protocol):
    """What the manager needs of the broker: topics by id, who leads what, the logs."""

    def topic_name(self, topic_id: uuid.UUID) -> str | None: ...
    def leader_epoch(self, topic: str, partition: int) -> tuple[int, int] | None:
        """(leader, leader epoch), or None for an unknown topic-partition."""

    def log(self, topic: str, partition: int) -> Any: ...


class PartitionError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Entry:
    """A cached share-partition and what guards it."""

    sp: SharePartition
    lock: trio.Lock = field(default_factory=trio.Lock)
    loaded: trio.Event = field(default_factory=trio.Event)
    error: PartitionError | None = None  # why loading failed (the entry is then dropped)


class SharePartitionManager:
    def __init__(
        self,
        node_id: int,
        logs: Logs,
        persister: SharePersister,
        settings: ShareSettings,
        group_configs: GroupOverrides | None,
        clock: TimerClock,
    ) -> None:
        self.node_id = node_id
        self.logs = logs
        self.persister = persister
        self.settings = settings
        self.group_configs = group_configs
        self.clock = clock
        self.sessions = ShareSessionCache(lambda: self.settings.max_share_sessions)
        self.entries: dict[SharePartitionKey, Entry] = {}
        self.timers = Timers()
        self._timer_loop = TimerLoop(self.timers, clock)
        self._waiters: set[trio.Event] = set()  # fetches parked until records become available again
        self._nursery: trio.Nursery | None = None  # background releases (closed connections)

    def group_settings(self, group_id: str) -> GroupShareSettings:
        return for_group(self.settings, self.group_configs, group_id)

    # -- share-partitions ----------------------------------------------------------------------
    async def entry(self, key: SharePartitionKey) -> Entry:
        """The loaded share-partition for `key`, loading it first if need be; raises
        PartitionError (Kafka's per-partition codes) when it cannot serve."""
        topic = self.logs.topic_name(key.topic_id)
        if topic is None:
            raise PartitionError(ErrorCode.UNKNOWN_TOPIC_ID, f"no topic has id {key.topic_id}")
        lead = self.logs.leader_epoch(topic, key.partition)
        if lead is None:
            self.drop(key)
            raise PartitionError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{topic}-{key.partition} does not exist")
        leader, epoch = lead
        if leader != self.node_id:
            self.drop(key)
            where = f"{topic}-{key.partition} is led by broker {leader}, not {self.node_id}"
            raise PartitionError(ErrorCode.NOT_LEADER_OR_FOLLOWER, where)
        entry = self.entries.get(key)
        if entry is not None:
            entry.sp.max_in_flight = self.settings.partition_max_record_locks  # a live setting
        if entry is not None and entry.sp.leader_epoch != epoch:
            self.drop(key)  # led elsewhere and back since it was loaded: load it again
            entry = None
        if entry is None:
            max_locks = self.settings.partition_max_record_locks
            entry = self.entries[key] = Entry(SharePartition(key, topic, epoch, max_locks))
            await self._load(entry)
        else:
            await entry.loaded.wait()
        if entry.error is not None:
            raise entry.error
        return entry

    async def _load(self, entry: Entry) -> None:
        sp = entry.sp
        sp.state = PartitionState.INITIALIZING
        try:
            code, state = await self.persister.read(sp.key, sp.leader_epoch)
            if code != ErrorCode.NONE or state is None:
                mapped = _PERSISTER_ERRORS.get(ErrorCode(code), ErrorCode.UNKNOWN_SERVER_ERROR)
                raise PartitionError(mapped, f"the share coordinator answered {ErrorCode(code).name}")
            start = state.start_offset
            if start == UNINITIALIZED_START_OFFSET:
                start = self._reset_offset(sp.key.group_id, sp.topic, sp.key.partition)
            sp.initialize(state, start)
            log.debug("share-partition %s loaded: start %d end %d", sp.key, sp.start_offset, sp.end_offset)
        except PartitionError as exc:
            entry.error = exc
            sp.state = PartitionState.FAILED
            self.entries.pop(sp.key, None)
        finally:
            entry.loaded.set()

    def _reset_offset(self, group_id: str, topic: str, partition: int) -> int:
        """share.auto.offset.reset for a share-partition that was never used (Kafka
        SharePartition.startOffsetDuringInitialization)."""
        part = self.logs.log(topic, partition)
        if part is None:
            raise PartitionError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{topic}-{partition} has no log here")
        strategy = self.group_settings(group_id).auto_offset_reset.strip().lower()
        if strategy == "earliest":
            return int(part.log_start_offset)
        if strategy.startswith("by_duration:"):
            ms = _duration_ms(strategy.split(":", 1)[1])
            _, _, offset = list_offset(part, max(0, self.clock.time_ms() - ms))
            return int(offset) if offset >= 0 else int(part.high_watermark)
        return int(part.high_watermark)

    def drop(self, key: SharePartitionKey) -> None:
        """Forget a share-partition (Kafka removeSharePartitionFromCache: it is fenced)."""
        entry = self.entries.pop(key, None)
        if entry is not None:
            entry.sp.state = PartitionState.FENCED
            self._wake()

    def drop_group(self, group_id: str) -> None:
        """Kafka's ShareGroupListener.onGroupEmpty: the group's share-partitions go."""
        for key in [k for k in self.entries if k.group_id == group_id]:
            self.drop(key)

    # -- acknowledgements and releases ---------------------------------------------------------
    async def acknowledge(
        self, group_id: str, member_id: str, key: SharePartitionKey, acks: Sequence[AckBatch]
    ) -> tuple[int, str | None]:
        """One partition's acknowledgements: Kafka's error code and message for the partition."""
        entry = self.entries.get(key)
        if entry is None or entry.sp.state is not PartitionState.ACTIVE:
            # Kafka: no such share-partition in this broker's cache
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "the share-partition is not loaded on this broker"
        settings = self.group_settings(group_id)
        async with entry.lock:
            renew = self.clock.time_ms() + settings.record_lock_duration_ms
            try:
                pending = entry.sp.acknowledge(member_id, acks, settings.delivery_count_limit, renew)
            except AckError as exc:
                return exc.code, exc.message
            for first, last, deadline in pending.renewed:
                self._schedule_lock(key, first, last, deadline)
            code = await self._persist(entry, pending)
        return code, None if code == ErrorCode.NONE else "the share coordinator could not write the state"

    async def release(self, group_id: str, member_id: str, keys: Sequence[SharePartitionKey]) -> None:
        """Kafka releaseSession: the member's acquired records go back (its session closed)."""
        limit = self.group_settings(group_id).delivery_count_limit
        for key in keys:
            entry = self.entries.get(key)
            if entry is None or entry.sp.state is not PartitionState.ACTIVE:
                continue
            async with entry.lock:
                await self._persist(entry, entry.sp.release_member(member_id, limit))

    def connection_closed_soon(self, connection_id: int) -> None:
        """The connection closed: release what its sessions held, in the background (the
        connection's own task is ending and must not wait on the share coordinator)."""
        if self._nursery is not None and self.sessions.of_connection(connection_id):
            self._nursery.start_soon(self.connection_closed, connection_id)

    async def connection_closed(self, connection_id: int) -> None:
        """The connection's share sessions end and their members' records are released."""
        for session in self.sessions.of_connection(connection_id):
            self.sessions.remove(session.key)
            group_id, member_id = session.key
            keys = [SharePartitionKey(group_id, tid, p) for tid, p in session.partitions]
            await self.release(group_id, member_id, keys)

    async def _persist(self, entry: Entry, pending: Pending, *, always_commit: bool = False) -> int:
        """Write `pending`, then commit it (or undo it if the write failed, unless
        `always_commit`); the partition's error code."""
        sp = entry.sp
        code = ErrorCode.NONE
        if pending.batches:
            start = sp.prospective_start_offset()
            code = ErrorCode(
                await self.persister.write(
                    sp.key,
                    sp.state_epoch,
                    sp.leader_epoch,
                    start,
                    sp.delivery_complete_count(start),
                    tuple(pending.batches),
                )
            )
        if code != ErrorCode.NONE and not always_commit:
            sp.rollback(pending)
            mapped = _PERSISTER_ERRORS.get(code, ErrorCode.UNKNOWN_SERVER_ERROR)
            if mapped in _FENCING:
                self.drop(sp.key)
            return mapped
        sp.commit(pending)
        if pending.released or not sp.batches:
            self._wake()
        return ErrorCode.NONE

    # -- waiting fetches -------------------------------------------------------------------------
    def add_waiter(self, event: trio.Event) -> None:
        """`event` is set the next time records become available again (a release, a lock
        expiry, a start offset that moved), as a partition's waiters are on a new high watermark."""
        self._waiters.add(event)

    def remove_waiter(self, event: trio.Event) -> None:
        self._waiters.discard(event)

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, set()
        for event in waiters:
            event.set()

    # -- acquisition locks ---------------------------------------------------------------------
    def _schedule_lock(self, key: SharePartitionKey, first: int, last: int, deadline_ms: int) -> None:
        self.timers.schedule(("share-lock", key, first, last), deadline_ms, partial(self._expire, key, first, last))
        self._timer_loop.scheduled()

    def schedule_locks(self, key: SharePartitionKey, ranges: Sequence[tuple[int, int]], deadline_ms: int) -> None:
        for first, last in ranges:
            self._schedule_lock(key, first, last, deadline_ms)

    async def _expire(self, key: SharePartitionKey, first: int, last: int) -> None:
        entry = self.entries.get(key)
        if entry is None or entry.sp.state is not PartitionState.ACTIVE:
            return
        async with entry.lock:
            limit = self.group_settings(key.group_id).delivery_count_limit
            pending = entry.sp.expire_locks(first, last, self.clock.time_ms(), limit)
            if pending.batches:
                await self._persist(entry, pending, always_commit=True)

    async def fire_due(self) -> int:
        """Expire every lock due now and wait until the changes are written (the manual clock's
        advance calls this at each deadline)."""
        fired = 0
        async with trio.open_nursery() as nursery:
            while (timer := self.timers.pop_expired(self.clock.time_ms())) is not None:
                nursery.start_soon(timer.action)
                fired += 1
        return fired

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Expire locks as they fall due, and release closed connections' records, until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            try:
                await self._timer_loop.run(self.fire_due)
            finally:
                self._nursery = None

    # -- what the control plane and describe see -------------------------------------------------
    def partitions_of(self, group_id: str) -> Mapping[SharePartitionKey, SharePartition]:
        return {k: e.sp for k, e in self.entries.items() if k.group_id == group_id and e.loaded.is_set()}


def in_flight_summary(sp: SharePartition) -> list[tuple[int, int, str, int, str]]:
    """(first, last, state, delivery count, member) runs from the start offset, for views."""
    return [(f, ln, s.state.name, s.delivery_count, s.member_id) for f, ln, s in sp.states_from_start()]


def acquired_by(sp: SharePartition, member_id: str) -> int:
    held = RecordState.ACQUIRED
    return sum(ln - f + 1 for f, ln, s in sp.states_from_start() if s.state is held and s.member_id == member_id)


def _duration_ms(text: str) -> int:
    """An ISO-8601 duration (PnDTnHnMnS) in ms, as share.auto.offset.reset=by_duration takes."""
    match = _DURATION.match(text.strip().upper())
    if match is None or text.strip().upper() in ("P", "PT"):
        raise PartitionError(ErrorCode.INVALID_CONFIG, f"share.auto.offset.reset duration {text!r} is not ISO-8601")
    days, hours, minutes, seconds = match.groups()
    total = int(days or 0) * 86_400 + int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(seconds or 0)
    return int(total * 1000)
