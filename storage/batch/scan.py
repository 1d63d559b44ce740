"""Fast scanning of RecordBatch v2 bytes without building objects: the batches of a file region
or a buffer (`Frames`). The records of one batch (`record_spans`, `key_spans`, ...) are walked
in record_walk.py.

Recovery, the cleaner, `Log` reads, dump/check and the verifier all walk batches through here.
Invariants: `Frames` hands out only whole batches with magic 2 and a size >= 61 whose bytes lie
inside [start, end) (and, with check_crc, whose CRC-32C matches); it stops at the first batch
that is not, and says why in `problem` (a length-prefixed log cannot be resynchronised). The
record walkers (record_walk.py) never read a record as valid unless it ends inside its batch.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from storage.crc import crc32c

from .layout import CRC_START, HEADER, HEADER_SIZE, LOG_OVERHEAD, MAGIC, Buffer, HeaderFields

__all__ = ["Frames", "Frame", "FrameProblem", "SCAN_CHUNK", "frame_bounds", "whole_batches", "find_batch"]

SCAN_CHUNK = 1 << 20
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_BASE_OFFSET = struct.Struct(">q")
_MIN_LENGTH = HEADER_SIZE - LOG_OVERHEAD

# (position of the batch in the file or buffer, buffer holding it, its offset in that buffer,
#  its 13 header fields in BatchHeader order). The batch is buf[off:off + fields[1] + 12].
Frame = tuple[int, Buffer, int, HeaderFields]


@dataclass(frozen=True, slots=True)
class FrameProblem:
    """Why a walk stopped before its end: `torn` for an incomplete batch at the end of the data
    (a crash mid-write), otherwise bytes that are not a batch (bad magic, length, CRC)."""

    position: int
    offset: int | None  # base offset of the bad batch if at least 8 bytes of it are there
    reason: str
    torn: bool


class Frames:
    """The batches of `source` (an fd, read with pread `chunk` bytes at a time, or a buffer such
    as bytes or an mmap) from byte `start` to `end` (default: the file size or buffer length).
    Iterating yields `Frame`s; afterwards `problem` is None if every byte up to `end` was whole
    batches. Buffers of an fd walk are shared by the batches of one read: copy what you keep."""

    __slots__ = ("_fd", "_buf", "start", "end", "check_crc", "chunk", "problem")

    def __init__(
        self,
        source: int | Buffer,
        start: int = 0,
        end: int | None = None,
        *,
        check_crc: bool = False,
        chunk: int = SCAN_CHUNK,
    ) -> None:
        if isinstance(source, int):
            self._fd: int | None = source
            self._buf: Buffer = b""
            if end is None:
                end = os.fstat(source).st_size
        else:
            self._fd, self._buf = None, source
            if end is None:
                end = len(source)
        self.start = start
        self.end = end
        self.check_crc = check_crc
        self.chunk = max(chunk, HEADER_SIZE)
        self.problem: FrameProblem | None = None

    def __iter__(self) -> Iterator[Frame]:
        return self._walk_buffer() if self._fd is None else self._walk_fd(self._fd)

    def _stop(self, buf: Buffer, off: int, pos: int, left: int, fields: HeaderFields | None) -> None:
        """Record the problem of the bytes at `pos` (`left` bytes remain before `end`)."""
        if fields is None:
            base = _BASE_OFFSET.unpack_from(buf, off)[0] if len(buf) - off >= 8 else None
            self.problem = FrameProblem(pos, base, f"torn tail: {left} bytes, less than a batch header", True)
            return
        base, length, magic, size = fields[0], fields[1], fields[3], fields[1] + LOG_OVERHEAD
        if magic != MAGIC:
            self.problem = FrameProblem(pos, base, f"bad magic {magic}", False)
        elif size < HEADER_SIZE:
            self.problem = FrameProblem(pos, base, f"batch length {length} is too small", False)
        elif size > left:
            self.problem = FrameProblem(pos, base, f"torn tail: batch of {size} bytes, {left} left", True)
        else:
            self.problem = FrameProblem(pos, base, "CRC-32C mismatch", False)

    def _walk_buffer(self) -> Iterator[Frame]:
        buf, pos, end, check = self._buf, self.start, self.end, self.check_crc
        unpack = HEADER.unpack_from
        view = memoryview(buf) if check else None
        while pos < end:
            left = end - pos
            if left < HEADER_SIZE:
                self._stop(buf, pos, pos, left, None)
                return
            fields = unpack(buf, pos)
            size = fields[1] + LOG_OVERHEAD
            if (
                fields[3] != MAGIC
                or size < HEADER_SIZE
                or size > left
                or (view is not None and crc32c(view[pos + CRC_START : pos + size]) != fields[4])
            ):
                self._stop(buf, pos, pos, left, fields)
                return
            yield pos, buf, pos, fields
            pos += size

    def _walk_fd(self, fd: int) -> Iterator[Frame]:
        # Invariant: buf holds file bytes [buf_start, buf_start + buf_len), never past `end`,
        # so a header that fits in buf also fits before `end`.
        pos, end, check, chunk = self.start, self.end, self.check_crc, self.chunk
        unpack, pread = HEADER.unpack_from, os.pread
        buf, buf_start, buf_len = b"", pos, 0
        view = memoryview(buf)
        while pos < end:
            off = pos - buf_start
            if off + HEADER_SIZE > buf_len:
                buf = pread(fd, min(chunk, end - pos), pos)
                buf_start, off, buf_len, view = pos, 0, len(buf), memoryview(buf)
                if buf_len < HEADER_SIZE:  # fewer bytes before `end`, or the file shrank
                    self._stop(buf, 0, pos, min(end - pos, buf_len), None)
                    return
            fields = unpack(buf, off)
            size = fields[1] + LOG_OVERHEAD
            if fields[3] != MAGIC or size < HEADER_SIZE or pos + size > end:
                self._stop(buf, off, pos, end - pos, fields)
                return
            if off + size > buf_len:
                buf = pread(fd, max(min(chunk, end - pos), size), pos)
                buf_start, off, buf_len, view = pos, 0, len(buf), memoryview(buf)
                if buf_len < size:
                    self._stop(buf, off, pos, buf_len, fields)
                    return
            if check and crc32c(view[off + CRC_START : off + size]) != fields[4]:
                self._stop(buf, off, pos, end - pos, fields)
                return
            yield pos, buf, off, fields
            pos += size


def frame_bounds(buf: Buffer, start: int = 0) -> Iterator[tuple[int, int, int]]:
    """(position, base offset, size) of each whole batch in buf[start:], judged by the base
    offset and batchLength fields only (bytes this log wrote or already validated); stops at
    the first batch that does not fit."""
    pos, end = start, len(buf)
    unpack = _OFFSET_AND_LENGTH.unpack_from
    while end - pos >= LOG_OVERHEAD:
        base, length = unpack(buf, pos)
        size = length + LOG_OVERHEAD
        if length < _MIN_LENGTH or pos + size > end:
            return
        yield pos, base, size
        pos += size


def whole_batches(buf: Buffer, start: int = 0) -> tuple[int, int]:
    """(the position after the last whole batch of buf[start:], that batch's position or -1 when
    there is none), as `frame_bounds` walks them; a plain loop: every fetch pays it."""
    pos, end, last = start, len(buf), -1
    unpack = _OFFSET_AND_LENGTH.unpack_from
    while end - pos >= LOG_OVERHEAD:
        length = unpack(buf, pos)[1]
        if length < _MIN_LENGTH or pos + length + LOG_OVERHEAD > end:
            break
        last = pos
        pos += length + LOG_OVERHEAD
    return pos, last


def find_batch(fd: int, start: int, end: int, offset: int, chunk: int) -> int | None:
    """Position of the first whole batch in file bytes [start, end) whose last offset is >=
    `offset` (Kafka's FileRecords.searchForOffsetWithSize), reading `chunk` bytes at a time;
    None if there is none. The fetch path: a plain loop over headers, no CRC check."""
    unpack, pos = HEADER.unpack_from, start
    buf, buf_start = b"", start
    while end - pos >= HEADER_SIZE:
        off = pos - buf_start
        if off + HEADER_SIZE > len(buf):
            buf, buf_start, off = os.pread(fd, max(chunk, HEADER_SIZE), pos), pos, 0
            if len(buf) < HEADER_SIZE:
                return None
        base, length, _, magic, _, _, last_delta = unpack(buf, off)[:7]
        size = length + LOG_OVERHEAD
        if magic != MAGIC or size < HEADER_SIZE or pos + size > end:
            return None
        if base + last_delta >= offset:
            return pos
        pos += size
    return None
