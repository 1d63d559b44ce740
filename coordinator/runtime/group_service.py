"""Wiring of the classic-group runtime into the server: settings in, running `GroupService` out.

`start_groups` opens __consumer_offsets (OffsetsLog, the durable writer), starts loading it in
the background (its groups answer COORDINATOR_LOAD_IN_PROGRESS until loaded), runs the runtime's
timer loop and the loader's reload task in the server's nursery, schedules offset retention and
closes the logs cleanly when the nursery is cancelled. `GroupService.submit` is what handlers
call: it is the one place that answers COORDINATOR_LOAD_IN_PROGRESS (partition loading) or
COORDINATOR_NOT_AVAILABLE (partition failed, or a failed append) per group. Group time follows
trio's clock (`TrioClock`), so MockClock tests see exact times.
"""
from __future__ import annotations

from protocol.errors import ErrorCode

import dataclasses
import functools
import logging
import uuid
from typing import Any, Callable

import trio

from coordinator.runtime.clock import TrioClock
from coordinator.config import Config
from coordinator.groups import (
    DeletedGroup, DeleteGroupsParams, DescribedGroup, DescribeGroupsParams, GroupConfig,
    GroupCoordinator, HeartbeatParams, HeartbeatResult, JoinGroupParams, JoinGroupResult,
    LeaveGroupParams, LeaveGroupResult, SyncGroupParams, SyncGroupResult,
)
from coordinator.groups.offset_requests import (
    FetchedGroup, OffsetCommitParams, OffsetDeleteParams, OffsetDeleteResult, OffsetFetchParams,
)
from coordinator.groups.offsets import commit_error
from coordinator.groups.retention import schedule_offset_expiration
from coordinator.runtime.loader import OffsetsLoader, open_offsets
from coordinator.runtime.partition_writer import TOPIC, CoordinatorUnavailableError, OffsetsLog
from coordinator.runtime.single_writer import Runtime

log = logging.getLogger(__name__)

# __consumer_offsets has no partition.metadata file (OffsetsLog owns its dirs): a fixed id.
OFFSETS_TOPIC_ID = uuid.uuid5(uuid.NAMESPACE_URL, "kgc:" + TOPIC)

# The answer each single-group request gets when its group cannot be served.
_ERROR_RESULTS: dict[type, Callable[[Any, ErrorCode], Any]] = {
    JoinGroupParams: lambda p, e: JoinGroupResult(e, p.member_id),
    SyncGroupParams: lambda p, e: SyncGroupResult(e),
    HeartbeatParams: lambda p, e: HeartbeatResult(e),
    LeaveGroupParams: lambda p, e: LeaveGroupResult(e),
    OffsetCommitParams: commit_error,
    OffsetDeleteParams: lambda p, e: OffsetDeleteResult(e),
}


def group_config(config: Config) -> GroupConfig:
    return GroupConfig(
        min_session_timeout_ms=config.group_min_session_timeout_ms,
        max_session_timeout_ms=config.group_max_session_timeout_ms,
        initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
        max_size=config.group_max_size,
        offsets_retention_ms=config.offsets_retention_minutes * 60_000,
        offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
        offset_metadata_max_bytes=config.offset_metadata_max_bytes,
    )


class GroupService:
    """The runtime as handlers see it: `await submit(params)`, with partition states applied."""

    def __init__(self, runtime: Runtime, writer: OffsetsLog, loader: OffsetsLoader) -> None:
        self.runtime = runtime
        self.writer = writer
        self.loader = loader
        self.loaded = trio.Event()  # set once the partitions found at start are loaded

    @property
    def groups(self) -> GroupCoordinator:
        return self.runtime.groups

    def group_error(self, group_id: str) -> ErrorCode | None:
        """COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE, or None if servable."""
        if not self.writer.is_loaded(group_id):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if not self.writer.is_available(group_id):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        return None

    def list_error(self) -> ErrorCode | None:
        """ListGroups covers every partition: one not servable fails it (Kafka's listGroups)."""
        for n in range(self.writer.num_partitions):
            state = self.writer.state(n).value
            if state == "loading":
                return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
            if state == "failed":
                return ErrorCode.COORDINATOR_NOT_AVAILABLE
        return None

    async def submit(self, request: Any) -> Any:
        if isinstance(request, (DescribeGroupsParams, DeleteGroupsParams)):
            return await self._submit_many(request, request.group_ids, "group_ids",
                                           _describe_error if isinstance(request, DescribeGroupsParams)
                                           else DeletedGroup)
        if isinstance(request, OffsetFetchParams):
            return await self._submit_many(request, request.groups, "groups",
                                           lambda g, e: FetchedGroup(g.group_id, e), key=_group_id)
        make_error = _ERROR_RESULTS.get(type(request))
        if make_error is not None:
            error = self.group_error(request.group_id)
            if error is not None:
                return make_error(request, error)
        try:
            return await self.runtime.submit(request)
        except CoordinatorUnavailableError as exc:
            if make_error is None:
                raise
            return make_error(request, ErrorCode(exc.error_code))

    async def _submit_many(self, request: Any, items: list[Any], field: str,
                           make_error: Callable[[Any, ErrorCode], Any],
                           key: Callable[[Any], str] = lambda x: x) -> list[Any]:
        """Serve the servable groups in one op; the others get their error, in request order."""
        errors = [self.group_error(key(item)) for item in items]
        served = [item for item, error in zip(items, errors) if error is None]
        results: list[Any] = []
        if served:
            try:
                results = await self.runtime.submit(dataclasses.replace(request, **{field: served}))
            except CoordinatorUnavailableError as exc:
                failed = ErrorCode(exc.error_code)
                results = [make_error(item, failed) for item in served]
        it = iter(results)
        return [next(it) if error is None else make_error(item, error)
                for item, error in zip(items, errors)]


def _group_id(item: Any) -> str:
    return item.group_id


def _describe_error(group_id: str, error: ErrorCode) -> DescribedGroup:
    return DescribedGroup(group_id, error, "", "", "")


async def start_groups(nursery: trio.Nursery, config: Config, topics: Any = None, *,
                       load: bool = True) -> GroupService:
    """Open, start loading and serve. With load=False the partitions on disk stay LOADING until
    `await service.loader.load_all()` (tests use it to observe COORDINATOR_LOAD_IN_PROGRESS)."""
    clock = TrioClock()
    groups = GroupCoordinator(group_config(config))
    # One store: the loader fills it, the operations change it.
    writer, loader = await open_offsets(config, clock, groups=groups, offsets=groups.offsets,
                                        load=False)
    groups.group_writable = writer.is_available  # retention skips loading/failed partitions
    runtime = Runtime(groups, clock, writer)
    loader.on_timers_changed = runtime.wake
    if topics is not None:
        from coordinator.broker.topics import Topic
        topics.register_internal(Topic(TOPIC, writer.num_partitions, OFFSETS_TOPIC_ID, internal=True))
    schedule_offset_expiration(groups, clock.time_ms())  # before the timer loop starts
    await nursery.start(_close_on_exit, writer)
    await nursery.start(runtime.run)
    await nursery.start(loader.run)
    await nursery.start(functools.partial(  # compacts __consumer_offsets (storage.cleaner)
        writer.run_cleaner, config.log_cleaner_backoff_ms, config.log_cleaner_dedupe_buffer_size))
    service = GroupService(runtime, writer, loader)
    if load:
        nursery.start_soon(_load, service)
    return service


async def _load(service: GroupService) -> None:
    await service.loader.load_all()
    service.loaded.set()


async def _close_on_exit(writer: OffsetsLog, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Close every __consumer_offsets log cleanly (flush, clean-shutdown marker) on stop."""
    task_status.started()
    try:
        await trio.sleep_forever()
    finally:
        writer.close()
