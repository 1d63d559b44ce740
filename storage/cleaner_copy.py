"""The cleaner's byte-level copying (Kafka's LogCleaner.Cleaner.cleanInto helpers): reading a
segment's batches CRC-checked in big chunks (`segment_batches`), appending retained batches to a
`.cleaned` segment in chunks (`ChunkWriter`), and rebuilding a batch with only its kept records
(`encode_retained`). Invariants: corrupt bytes are never copied (CorruptLogError instead); a
rebuilt batch keeps its base and last offset, producer fields, attributes and codec.
"""

from __future__ import annotations

from collections.abc import Iterator

from .batch import BatchHeader, Record, decode_header, encode_batch_and_header, iter_records
from .batch.layout import COMPRESSION_MASK, CONTROL_BIT, TIMESTAMP_TYPE_BIT, TRANSACTIONAL_BIT, Buffer
from .batch.scan import Frame, Frames
from .recovery import CorruptLogError
from .segment import LogSegment

__all__ = ["READ_CHUNK", "segment_batches", "ChunkWriter", "encode_retained", "with_horizon"]

READ_CHUNK = 8 << 20  # the cleaner reads segments in big sequential chunks


def segment_batches(seg: LogSegment) -> Iterator[Frame]:
    """Every whole batch of `seg`, CRC-checked: the cleaner never spreads corrupt bytes. A torn
    tail ends the walk silently (only a crashed active segment has one, and it is never
    cleaned); anything else that is not a batch is a CorruptLogError."""
    frames = Frames(seg.fd, 0, seg.size, check_crc=True, chunk=READ_CHUNK)
    yield from frames
    problem = frames.problem
    if problem is not None and not problem.torn:
        raise CorruptLogError(seg.log_path, problem.position, problem.offset, problem.reason)


class ChunkWriter:
    """Appends retained batches to a `.cleaned` segment in chunks; each chunk is one
    LogSegment.append, so an index entry may cover several batches starting at its position
    (Kafka's cleaner appends whole retained read buffers the same way)."""

    def __init__(self, seg: LogSegment, chunk_bytes: int) -> None:
        self.seg, self.chunk_bytes = seg, chunk_bytes
        self.buf = bytearray()
        self.first = self.last = self.max_ts = -1
        self.bytes_out = 0

    def add(self, data: bytes | memoryview, base: int, last: int, max_ts: int) -> None:
        if not self.buf:
            self.first, self.max_ts = base, max_ts
        self.buf += data
        self.last = last
        if max_ts > self.max_ts:
            self.max_ts = max_ts
        if len(self.buf) >= self.chunk_bytes:
            self.flush()

    def flush(self) -> None:
        if not self.buf:
            return
        # Only base/last offset, size and max timestamp of this header are used by append.
        header = BatchHeader(
            self.first, len(self.buf) - 12, -1, 2, 0, 0, self.last - self.first, -1, self.max_ts, -1, -1, -1, 0
        )
        self.seg.append(bytes(self.buf), header)
        self.bytes_out += len(self.buf)
        self.buf = bytearray()


def encode_retained(h: BatchHeader, records: list[Record], horizon: int | None) -> tuple[bytes, BatchHeader]:
    """Rebuild a batch: same base and last offset, producer fields, attributes and codec
    (MemoryRecords.buildRetainedRecordsInto with overrideLastOffset)."""
    attrs = h.attributes
    return encode_batch_and_header(
        h.base_offset,
        records,
        compression=attrs & COMPRESSION_MASK,
        producer_id=h.producer_id,
        producer_epoch=h.producer_epoch,
        base_sequence=h.base_sequence,
        transactional=bool(attrs & TRANSACTIONAL_BIT),
        control=False,
        timestamp_type=1 if attrs & TIMESTAMP_TYPE_BIT else 0,
        partition_leader_epoch=h.partition_leader_epoch,
        last_offset_delta=h.last_offset_delta,
        delete_horizon_ms=horizon,
    )


def with_horizon(batch: Buffer, horizon: int) -> bytes:
    """The batch with the same records rewritten with a delete horizon (KIP-534: baseTimestamp
    is the horizon and the DELETE_HORIZON attribute is set), as MemoryRecords.filterTo does for
    a transaction marker that may go (`needToSetDeleteHorizon`)."""
    h = decode_header(batch)
    attrs = h.attributes
    data, _ = encode_batch_and_header(
        h.base_offset,
        list(iter_records(batch)),
        compression=attrs & COMPRESSION_MASK,
        producer_id=h.producer_id,
        producer_epoch=h.producer_epoch,
        base_sequence=h.base_sequence,
        transactional=bool(attrs & TRANSACTIONAL_BIT),
        control=bool(attrs & CONTROL_BIT),
        timestamp_type=1 if attrs & TIMESTAMP_TYPE_BIT else 0,
        partition_leader_epoch=h.partition_leader_epoch,
        last_offset_delta=h.last_offset_delta,
        delete_horizon_ms=horizon,
    )
    return data
