"""One served partition: its storage Log (which keeps the producer state), its high watermark,
its last stable offset, its waiters.

Invariants: appends run synchronously on the trio thread from check to append to state update,
so two produces to one partition never interleave inside that step. The high watermark only
moves after `Log.wait_durable`, so a fetch never hands out bytes a crash could take back, and
every move wakes the fetches parked on this partition (no polling). The last stable offset is
the high watermark or the first offset of an open (or not yet durable) transaction, whichever is
lower; read_committed reads stop there, with the aborted transactions they overlap, and their
parked fetches are woken only when the last stable offset moves (a transaction's data does not
move it: its marker does). Reads return whole batches only (Kafka's Partition + UnifiedLog roles
for one replica). Transaction markers come from the transaction coordinator (`append_marker`),
never from clients.
"""

from __future__ import annotations

from dataclasses import dataclass

import trio

from coordinator.broker.producer_state import check
from protocol.errors import ErrorCode
from storage.batch import (
    HEADER_SIZE,
    HEADER_SIZE_UP_TO_MAGIC,
    MAGIC,
    BatchHeader,
    InvalidBatch,
    assign_base_offset,
    batch_next_offset,
    decode_header,
    encode_marker,
    frame_bounds,
    peek_frame,
    validate_batch,
    whole_batches,
)
from storage.log import Log, LogFailedError
from storage.producer_state import ProducerStateManager

NO_LEADER_EPOCH = -1


class AppendError(Exception):
    def __init__(self, error: int, message: str) -> None:
        super().__init__(message)
        self.error, self.message = error, message


@dataclass(slots=True)
class AppendResult:
    error: int = ErrorCode.NONE
    base_offset: int = -1
    log_start_offset: int = -1
    message: str | None = None


def split_batches(records: bytes, max_message_bytes: int) -> list[tuple[BatchHeader, memoryview]]:
    """Validates a produce request's record batches (Kafka's analyzeAndValidateRecords and
    LogValidator checks, in their order); raises AppendError on the first bad one."""
    view = memoryview(records)
    batches: list[tuple[BatchHeader, memoryview]] = []
    pos, end = 0, len(view)
    while pos < end:
        if end - pos < HEADER_SIZE_UP_TO_MAGIC:
            raise AppendError(ErrorCode.CORRUPT_MESSAGE, f"{end - pos} trailing bytes are not a batch")
        base_offset, size, magic = peek_frame(view, pos)
        if magic != MAGIC:
            raise AppendError(
                ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
                f"magic {magic} is not supported: only record batch v2 (magic 2)",
            )
        if size < HEADER_SIZE or size > end - pos:
            raise AppendError(
                ErrorCode.CORRUPT_MESSAGE, f"batch length {size - 12} does not fit the {end - pos} bytes left"
            )
        if size > max_message_bytes:
            raise AppendError(
                ErrorCode.MESSAGE_TOO_LARGE,
                f"batch of {size} bytes is larger than max.message.bytes {max_message_bytes}",
            )
        chunk = view[pos : pos + size]
        try:
            # One batch (what every client sends per partition): Log.append_batch checks the
            # CRC anyway, so only a multi-batch request pays for a check up front, which keeps
            # it all-or-nothing as Kafka's is.
            header = decode_header(chunk) if size == end else validate_batch(chunk)
        except InvalidBatch as exc:
            raise AppendError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
        if base_offset != 0:
            raise AppendError(
                ErrorCode.CORRUPT_MESSAGE, f"a producer's batch must have base offset 0, not {base_offset}"
            )
        if header.records_count != header.last_offset_delta + 1:
            raise AppendError(
                ErrorCode.CORRUPT_MESSAGE,
                f"batch says {header.records_count} records but last offset delta {header.last_offset_delta}",
            )
        if header.is_control:  # LogValidator: clients are not allowed to write control records
            raise AppendError(ErrorCode.INVALID_RECORD, "clients are not allowed to write control records")
        if header.is_transactional and header.producer_id < 0:
            raise AppendError(ErrorCode.INVALID_RECORD, "a transactional batch needs a producer id")
        batches.append((header, chunk))
        pos += size
    return batches


class Partition:
    def __init__(self, topic: str, index: int, log: Log) -> None:
        self.topic, self.index, self.log = topic, index, log
        self.high_watermark = log.log_end_offset  # opened from disk: all of it was written before
        log.producer_state.on_high_watermark(self.high_watermark)
        self._waiters: set[trio.Event] = set()
        self._committed_waiters: set[trio.Event] = set()  # read_committed fetches
        self._stable = self.last_stable_offset  # what those waiters last saw

    @property
    def producers(self) -> ProducerStateManager:
        """The log's producer state (kept by storage on every append and across restarts)."""
        return self.log.producer_state

    # -- facts ---------------------------------------------------------------------------------
    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """UnifiedLog.lastStableOffset: no read_committed consumer reads at or past it."""
        unstable = self.log.first_unstable_offset()
        return self.high_watermark if unstable is None else min(unstable, self.high_watermark)

    def has_ongoing_transaction(self, producer_id: int, epoch: int) -> bool:
        """UnifiedLog.hasOngoingTransaction: the producer (at this epoch) has an open transaction here."""
        return self.log.producer_state.has_ongoing(producer_id, epoch)

    # -- produce -------------------------------------------------------------------------------
    def append_now(self, records: bytes | None, max_message_bytes: int) -> tuple[AppendResult, int]:
        """Validates and appends synchronously; returns the result and the last offset that
        must become durable before it may be acknowledged (-1: nothing to wait for)."""
        try:
            batches = split_batches(records or b"", max_message_bytes)
        except AppendError as exc:
            return AppendResult(exc.error, -1, self.log_start_offset, exc.message), -1
        if not batches:
            return AppendResult(ErrorCode.NONE, -1, self.log_start_offset), -1  # Kafka: a no-op append
        first_offset, wait_for = -1, -1
        try:
            for header, raw in batches:
                verdict = check(self.producers, header)
                if verdict.error:
                    return AppendResult(verdict.error, -1, self.log_start_offset, verdict.message), wait_for
                if verdict.duplicate is not None:
                    # Kafka answers a retried batch with the offsets of the copy it already has.
                    base, last = verdict.duplicate.first_offset, verdict.duplicate.last_offset
                else:
                    known: BatchHeader | None = header  # what the log would decode again
                    if header.partition_leader_epoch != NO_LEADER_EPOCH:
                        # Kafka stamps the leader epoch here; ours is always -1, and a stored epoch
                        # >= 0 would make clients validate positions with OffsetForLeaderEpoch.
                        raw, known = memoryview(assign_base_offset(bytes(raw), 0, NO_LEADER_EPOCH)), None
                    try:
                        base, last = self.log.append_batch(raw, known)
                    except InvalidBatch as exc:  # the CRC of a lone batch is checked here
                        return AppendResult(ErrorCode.CORRUPT_MESSAGE, -1, self.log_start_offset, str(exc)), wait_for
                first_offset = base if first_offset < 0 else first_offset
                wait_for = max(wait_for, last)
        except (LogFailedError, OSError) as exc:
            return AppendResult(ErrorCode.KAFKA_STORAGE_ERROR, -1, self.log_start_offset, str(exc)), -1
        return AppendResult(ErrorCode.NONE, first_offset, self.log_start_offset), wait_for

    async def make_durable(self, result: AppendResult, wait_for: int) -> None:
        """Waits for the log's durability policy, then lets fetches see the data."""
        if wait_for < 0:
            return
        try:
            await self.log.wait_durable(wait_for)
        except (LogFailedError, OSError) as exc:
            result.error, result.base_offset, result.message = ErrorCode.KAFKA_STORAGE_ERROR, -1, str(exc)
            return
        self.advance_high_watermark(wait_for + 1)

    def append_marker(
        self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, transaction_version: int = 0
    ) -> tuple[AppendResult, int]:
        """Append a COMMIT/ABORT control batch for the producer (WriteTxnMarkers, coordinator
        origin), refused as ProducerAppendInfo.checkProducerEpoch refuses it: below the
        producer's epoch, or, for a transaction.version 2 marker (whose epoch the coordinator
        bumped), at it, unless the producer has no open transaction here (a retried marker).
        Returns like `append_now`."""
        entry = self.producers.producers.get(producer_id)
        if entry is not None:
            current = entry.producer_epoch
            stale = producer_epoch <= current if transaction_version >= 2 else producer_epoch < current
            if stale and not (
                transaction_version >= 2 and producer_epoch == current and entry.current_txn_first_offset < 0
            ):
                return AppendResult(
                    ErrorCode.INVALID_PRODUCER_EPOCH,
                    -1,
                    self.log_start_offset,
                    f"marker epoch {producer_epoch} of producer {producer_id} is "
                    f"{'<=' if transaction_version >= 2 else '<'} its epoch {current} (TV{transaction_version})",
                ), -1
        marker = encode_marker(producer_id, producer_epoch, commit, coordinator_epoch, self.log.clock.time_ms())
        try:
            base, _ = self.log.append_batch(marker)
        except (LogFailedError, OSError) as exc:
            return AppendResult(ErrorCode.KAFKA_STORAGE_ERROR, -1, self.log_start_offset, str(exc)), -1
        return AppendResult(ErrorCode.NONE, base, self.log_start_offset), base

    async def append(self, records: bytes | None, max_message_bytes: int) -> AppendResult:
        result, wait_for = self.append_now(records, max_message_bytes)
        await self.make_durable(result, wait_for)
        return result

    def advance_high_watermark(self, offset: int) -> None:
        if offset > self.high_watermark:
            self.high_watermark = min(offset, self.log.log_end_offset)
            self.log.producer_state.on_high_watermark(self.high_watermark)
            waiters, self._waiters = self._waiters, set()
            stable = self.last_stable_offset
            if stable != self._stable:
                self._stable = stable
                waiters |= self._committed_waiters
                self._committed_waiters = set()
            for event in waiters:
                event.set()

    # -- fetch ---------------------------------------------------------------------------------
    def read(self, offset: int, max_bytes: int, min_one: bool, committed: bool = False) -> bytes:
        """Whole batches from the one holding `offset`, below the high watermark (the last
        stable offset when `committed`), within `max_bytes` unless `min_one` lets a first
        oversized batch through (KIP-74). The caller checked the offset range."""
        hw = self.last_stable_offset if committed else self.high_watermark
        if offset >= hw:
            return b""
        data = self.log.read(offset, max_bytes if max_bytes > 0 else 1)
        if self.log.log_end_offset <= hw and (len(data) <= max_bytes or min_one):
            # All the log holds is below `hw`, and the log's read kept to max_bytes (or is the one
            # batch min_one lets through): the walk below would keep every batch.
            return data
        keep = 0
        for pos, base_offset, size in frame_bounds(data):
            if base_offset >= hw:
                break
            if pos + size > max_bytes and not (min_one and pos == 0):
                break
            keep = pos + size
        return data if keep == len(data) else data[:keep]

    def aborted_transactions(self, offset: int, records: bytes) -> list[tuple[int, int]]:
        """(producer id, first offset) of every aborted transaction overlapping what a
        read_committed fetch from `offset` returned (UnifiedLog.addAbortedTransactions)."""
        last = whole_batches(records)[1]
        if last < 0:
            return []
        upper = batch_next_offset(records, last)
        return [(t.producer_id, t.first_offset) for t in self.log.collect_aborted(offset, upper)]

    def offset_error(self, offset: int) -> int:
        """OFFSET_OUT_OF_RANGE below the log start or past the log end (UnifiedLog.read);
        an offset between the high watermark and the log end is valid and just waits."""
        if offset < self.log.log_start_offset or offset > self.log.log_end_offset:
            return ErrorCode.OFFSET_OUT_OF_RANGE
        return ErrorCode.NONE

    # -- DeleteRecords -------------------------------------------------------------------------
    def delete_records(self, offset: int) -> tuple[int, int, str | None]:
        """Partition.deleteRecordsOnLeader: move the log start offset to `offset` (-1: the high
        watermark); past the high watermark -> OFFSET_OUT_OF_RANGE. Returns (error, low
        watermark, message)."""
        if self.log.config.cleanup_policy != "delete":
            return (
                ErrorCode.POLICY_VIOLATION,
                -1,
                f"Records of partition {self.topic}-{self.index} can not be deleted due to the configured policy",
            )
        target = self.high_watermark if offset == -1 else offset
        if target < 0 or target > self.high_watermark:
            return (
                ErrorCode.OFFSET_OUT_OF_RANGE,
                -1,
                f"Cannot increment the log start offset to {target} of partition {self.topic}-{self.index} "
                f"since it is larger than the high watermark {self.high_watermark}"
                if target >= 0
                else f"The offset {target} for partition {self.topic}-{self.index} is not valid",
            )
        try:
            self.log.increment_log_start_offset(target)
        except (LogFailedError, OSError) as exc:
            return ErrorCode.KAFKA_STORAGE_ERROR, -1, str(exc)
        return ErrorCode.NONE, self.log_start_offset, None

    # -- long polling --------------------------------------------------------------------------
    def add_waiter(self, event: trio.Event, *, committed: bool = False) -> None:
        """Set `event` when the high watermark moves (`committed`: when the last stable offset does)."""
        (self._committed_waiters if committed else self._waiters).add(event)

    def remove_waiter(self, event: trio.Event) -> None:
        self._waiters.discard(event)
        self._committed_waiters.discard(event)

    def wake_waiters(self) -> None:
        waiters, self._waiters = self._waiters | self._committed_waiters, set()
        self._committed_waiters = set()
        for event in waiters:
            event.set()

    # -- retention -------------------------------------------------------------------
    def apply_retention(self, now_ms: int) -> int:
        return self.log.apply_retention(now_ms)  # (the log forgets producers whose data went)
