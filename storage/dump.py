"""`kgc dump` and `kgc check`: read-only inspection of segment files, partition dirs, data dirs.

`dump` prints batches (and with deep=True records; a control record as its end-transaction
marker) in kafka-dump-log.sh's layout (DumpLogSegments), or JSON lines, and `.txnindex` /
`.snapshot` files as dumpTxnIndex / dumpProducerIdSnapshot print them; `check` verifies CRCs,
record encoding, offset order, file names, indexes and aborted-transaction indexes (each entry
names an ABORT marker of its producer in its segment), and reports the first problem of each
partition precisely (file, position, offset). Nothing here opens a file for writing: files are
mmapped read-only, so it is safe to run against a live or crashed directory. Formats: FORMAT.md.
"""

from __future__ import annotations

import base64
import json as jsonlib
import mmap
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TextIO

from .batch import (
    COMPRESSION_NAMES,
    CONTROL_TYPE_NAMES,
    BatchHeader,
    InvalidBatch,
    Record,
    control_type,
    crc_matches,
    iter_records,
)
from .batch.control import ABORT, COMMIT
from .batch.layout import Buffer
from .batch.scan import Frames
from .index import OffsetIndex, TimeIndex
from .producer_snapshot import CorruptSnapshotError, read_snapshot
from .txn_index import ENTRY as TXN_ENTRY
from .txn_index import read_entries

__all__ = ["dump", "check", "Problem", "Decoder"]

# (offset, key, value) -> (key text, payload text); how `kgc dump --offsets-decoder` plugs in.
Decoder = Callable[[int, "bytes | None", "bytes | None"], "tuple[str | None, str | None]"]

_NAME = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)(\.cleaned|\.swap|\.deleted)?$")


@dataclass(frozen=True)
class Problem:
    file: str
    position: int | None
    offset: int | None
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: position {self.position}: offset {self.offset}: {self.reason}"


class _Batches:
    """Read-only walk over a `.log` file (mmapped): yields (position, header, bytes-view) and
    records why it stopped early in `.problem`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.problem: Problem | None = None
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            self.data: Buffer = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self.size = size

    def __iter__(self) -> Iterator[tuple[int, BatchHeader, memoryview]]:
        view = memoryview(self.data)
        frames = Frames(self.data)
        for pos, _, _, fields in frames:
            h = BatchHeader._make(fields)
            yield pos, h, view[pos : pos + h.size]
        if frames.problem is not None:
            p = frames.problem
            self.problem = Problem(self.path, p.position, p.offset, p.reason)


def _segment_files(path: str) -> list[str]:
    return sorted(
        os.path.join(path, n)
        for n in os.listdir(path)
        if (m := _NAME.match(n)) and m.group(2) == "log" and not m.group(3)
    )


def _partition_dirs(path: str) -> list[str]:
    if _segment_files(path) or any(_NAME.match(n) for n in os.listdir(path)):
        return [path]
    return sorted(os.path.join(path, n) for n in os.listdir(path) if os.path.isdir(os.path.join(path, n)))


# -- dump ---------------------------------------------------------------------------------------


def dump(
    path: str | os.PathLike[str],
    out: TextIO,
    deep: bool = False,
    json: bool = False,
    index: bool = False,
    decoder: Decoder | None = None,
) -> None:
    """Print a `.log`/`.index`/`.timeindex`/`.txnindex`/`.snapshot` file, a partition dir or a
    data dir (with `index`, each segment's indexes too). A `decoder`
    (offset, key, value) -> (key text, payload text) prints records through it, as
    DumpLogSegments' message parsers do (a None text is left out); it implies deep."""
    path = os.fspath(path)
    if decoder is not None:
        deep = True
    if os.path.isdir(path):
        for part in _partition_dirs(path):
            for log_file in _segment_files(part):
                _dump_file(log_file, out, deep, json, decoder)
                if index:
                    for ext in (".index", ".timeindex", ".txnindex"):
                        if ext != ".txnindex" or os.path.exists(log_file[:-4] + ext):
                            _dump_file(log_file[:-4] + ext, out, deep, json)
        return
    _dump_file(path, out, deep, json, decoder)
    if index and path.endswith(".log"):
        for ext in (".index", ".timeindex", ".txnindex"):
            if os.path.exists(path[:-4] + ext):
                _dump_file(path[:-4] + ext, out, deep, json)


def _dump_file(path: str, out: TextIO, deep: bool, json: bool, decoder: Decoder | None = None) -> None:
    if path.endswith(".index") or path.endswith(".timeindex"):
        _dump_index(path, out, json)
        return
    if path.endswith(".txnindex") or path.endswith(".snapshot"):
        _dump_txn_file(path, out, json)
        return
    if not json:
        out.write(f"Dumping {path}\n")
        m = _NAME.match(os.path.basename(path))
        out.write(f"Log starting offset: {int(m.group(1)) if m else 0}\n")
    batches = _Batches(path)
    for pos, h, view in batches:
        valid = crc_matches(view, 0, h.size, h.crc)
        _print_batch(out, pos, h, valid, json)
        if deep:
            try:
                for r in iter_records(view):
                    _print_record(out, h, r, json, decoder)
            except InvalidBatch as exc:
                out.write(f"| bad records: {exc}\n")
    if batches.problem is not None:
        if json:
            out.write(
                jsonlib.dumps(
                    {
                        "type": "problem",
                        "file": path,
                        "position": batches.problem.position,
                        "reason": batches.problem.reason,
                    }
                )
                + "\n"
            )
        else:
            out.write(
                f"Found {batches.size - (batches.problem.position or 0)} invalid bytes at the end of "
                f"{os.path.basename(path)} ({batches.problem.reason})\n"
            )


def _print_batch(out: TextIO, pos: int, h: BatchHeader, valid: bool, json: bool) -> None:
    ts_name = "LogAppendTime" if h.timestamp_type else "CreateTime"
    horizon = h.delete_horizon_ms
    if json:
        out.write(
            jsonlib.dumps(
                {
                    "type": "batch",
                    "baseOffset": h.base_offset,
                    "lastOffset": h.last_offset,
                    "count": h.records_count,
                    "baseSequence": h.base_sequence,
                    "lastSequence": h.last_sequence,
                    "producerId": h.producer_id,
                    "producerEpoch": h.producer_epoch,
                    "partitionLeaderEpoch": h.partition_leader_epoch,
                    "isTransactional": h.is_transactional,
                    "isControl": h.is_control,
                    "deleteHorizonMs": horizon,
                    "position": pos,
                    "timestampType": ts_name,
                    "maxTimestamp": h.max_timestamp,
                    "size": h.size,
                    "magic": h.magic,
                    "compresscodec": COMPRESSION_NAMES.get(h.compression, "unknown"),
                    "crc": h.crc,
                    "isvalid": valid,
                }
            )
            + "\n"
        )
        return
    out.write(
        f"baseOffset: {h.base_offset} lastOffset: {h.last_offset} count: {h.records_count} "
        f"baseSequence: {h.base_sequence} lastSequence: {h.last_sequence} "
        f"producerId: {h.producer_id} producerEpoch: {h.producer_epoch} "
        f"partitionLeaderEpoch: {h.partition_leader_epoch} "
        f"isTransactional: {str(h.is_transactional).lower()} isControl: {str(h.is_control).lower()} "
        f"deleteHorizonMs: {'OptionalLong.empty' if horizon is None else f'OptionalLong[{horizon}]'} "
        f"position: {pos} {ts_name}: {h.max_timestamp} size: {h.size} magic: {h.magic} "
        f"compresscodec: {COMPRESSION_NAMES.get(h.compression, 'unknown')} crc: {h.crc} "
        f"isvalid: {str(valid).lower()}\n"
    )


def _b64(blob: bytes | None) -> str | None:
    return None if blob is None else base64.b64encode(blob).decode("ascii")


def _text(blob: bytes | None) -> str:
    return "null" if blob is None else blob.decode("utf-8", errors="backslashreplace")


def _print_record(out: TextIO, h: BatchHeader, r: Record, json: bool, decoder: Decoder | None = None) -> None:
    offset = h.base_offset if r.offset is None else r.offset  # (decoded records have offsets)
    seq = -1 if h.base_sequence < 0 else (h.base_sequence + offset - h.base_offset) % 2**31
    ts_name = "LogAppendTime" if h.timestamp_type else "CreateTime"
    key_size = -1 if r.key is None else len(r.key)
    value_size = -1 if r.value is None else len(r.value)
    if json:
        extra: dict[str, object] = {}
        if h.is_control:
            extra = {"control": _control_text(r).strip()}
        elif decoder is not None:
            extra = {"decoded": dict(zip(("key", "payload"), decoder(offset, r.key, r.value)))}
        out.write(
            jsonlib.dumps(
                {
                    "type": "record",
                    "offset": r.offset,
                    "timestampType": ts_name,
                    "timestamp": r.timestamp,
                    "keySize": key_size,
                    "valueSize": value_size,
                    "sequence": seq,
                    "headers": [[k, _b64(v)] for k, v in r.headers],
                    "key": _b64(r.key),
                    "value": _b64(r.value),
                    **extra,
                }
            )
            + "\n"
        )
        return
    header_keys = "[" + ",".join(k for k, _ in r.headers) + "]"
    if h.is_control:  # DumpLogSegments: the marker, never the parser
        shown = _control_text(r)
    elif decoder is None:
        shown = f"key: {_text(r.key)} payload: {_text(r.value)}"
    else:
        key_text, payload_text = decoder(offset, r.key, r.value)
        shown = " ".join(
            f"{name}: {text}" for name, text in (("key", key_text), ("payload", payload_text)) if text is not None
        )
    out.write(
        f"| offset: {r.offset} {ts_name}: {r.timestamp} keySize: {key_size} "
        f"valueSize: {value_size} sequence: {seq} headerKeys: {header_keys} {shown}\n"
    )


def _control_text(r: Record) -> str:
    kind = control_type(r.key)
    if kind in (ABORT, COMMIT) and r.value is not None and len(r.value) >= 6:
        epoch = int.from_bytes(r.value[2:6], "big", signed=True)
        return f"endTxnMarker: {CONTROL_TYPE_NAMES[kind]} coordinatorEpoch: {epoch}"
    return f"controlType: {CONTROL_TYPE_NAMES.get(kind, 'UNKNOWN')}({kind})"


def _dump_txn_file(path: str, out: TextIO, json: bool) -> None:
    """DumpLogSegments.dumpTxnIndex / dumpProducerIdSnapshot."""
    if not json:
        out.write(f"Dumping {path}\n")
    if path.endswith(".txnindex"):
        with open(path, "rb") as f:
            for t in read_entries(f.read()):
                if json:
                    out.write(
                        jsonlib.dumps(
                            {
                                "type": "abortedTxn",
                                "version": t.version,
                                "producerId": t.producer_id,
                                "firstOffset": t.first_offset,
                                "lastOffset": t.last_offset,
                                "lastStableOffset": t.last_stable_offset,
                            }
                        )
                        + "\n"
                    )
                else:
                    out.write(
                        f"version: {t.version} producerId: {t.producer_id} firstOffset: {t.first_offset} "
                        f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}\n"
                    )
        return
    try:
        entries = read_snapshot(path)
    except CorruptSnapshotError as exc:
        out.write(f"{exc}\n")
        return
    for e in entries:
        b = e.batches[-1] if e.batches else None
        if json:
            out.write(
                jsonlib.dumps(
                    {
                        "type": "producer",
                        "producerId": e.producer_id,
                        "producerEpoch": e.producer_epoch,
                        "coordinatorEpoch": e.coordinator_epoch,
                        "currentTxnFirstOffset": e.current_txn_first_offset,
                        "lastTimestamp": e.last_timestamp,
                        "lastSequence": b.last_seq if b else -1,
                        "lastOffset": b.last_offset if b else -1,
                    }
                )
                + "\n"
            )
            continue
        txn = "OptionalLong.empty" if e.current_txn_first_offset < 0 else f"OptionalLong[{e.current_txn_first_offset}]"
        line = (
            f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} coordinatorEpoch: "
            f"{e.coordinator_epoch} currentTxnFirstOffset: {txn} lastTimestamp: {e.last_timestamp} "
        )
        if b is not None:
            line += (
                f"firstSequence: {b.first_seq} lastSequence: {b.last_seq} lastOffset: {b.last_offset} "
                f"offsetDelta: {b.offset_delta} timestamp: {b.timestamp}"
            )
        out.write(line + "\n")


def _dump_index(path: str, out: TextIO, json: bool) -> None:
    is_time = path.endswith(".timeindex")
    entry = TimeIndex.ENTRY if is_time else OffsetIndex.ENTRY
    m = _NAME.match(os.path.basename(path))
    base = int(m.group(1)) if m else 0
    with open(path, "rb") as f:
        data = f.read()
    if not json:
        out.write(f"Dumping {path}\n")
    for a, b in entry.iter_unpack(data[: len(data) - len(data) % entry.size]):
        if json:
            row = {"timestamp": a, "offset": base + b} if is_time else {"offset": base + a, "position": b}
            out.write(jsonlib.dumps({"type": "timeindex" if is_time else "index", **row}) + "\n")
        elif is_time:
            out.write(f"timestamp: {a} offset: {base + b}\n")
        else:
            out.write(f"offset: {base + a} position: {b}\n")
    for problem in _check_index(path[: path.rindex(".")] + ".log", base, is_time):
        out.write(f"Index problem: {problem}\n")


# -- check --------------------------------------------------------------------------------------


def check(path: str | os.PathLike[str]) -> list[Problem]:
    """First problem of each partition dir under `path` (or of the single file), [] if sound."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        return _check_segment(path, None)[:1]
    problems: list[Problem] = []
    for part in _partition_dirs(path):
        problems.extend(_check_partition(part)[:1])
    return problems


def _check_partition(part: str) -> list[Problem]:
    for name in sorted(os.listdir(part)):
        m = _NAME.match(name)
        if m and m.group(3):
            return [
                Problem(
                    os.path.join(part, name), None, None, f"leftover {m.group(3)} file of an interrupted cleaner swap"
                )
            ]
        if name.endswith((".log", ".index", ".timeindex", ".txnindex", ".snapshot")) and not m:
            return [Problem(os.path.join(part, name), None, None, "segment file name is not a 20-digit base offset")]
    prev_next: int | None = None
    files = _segment_files(part)
    for log_file in files:
        # The active segment's index may be zero-filled past its entries (Kafka preallocates it;
        # a crash leaves it so); recovery rebuilds it, so that is not a problem of the data.
        problems = _check_segment(log_file, prev_next, active=log_file == files[-1])
        if problems:
            return problems
        prev_next = _last_next_offset(log_file)
    return []


def _last_next_offset(log_file: str) -> int | None:
    nxt = None
    for _, h, _ in _Batches(log_file):
        nxt = h.next_offset
    return nxt


def _check_segment(log_file: str, prev_next: int | None, active: bool = True) -> list[Problem]:
    m = _NAME.match(os.path.basename(log_file))
    if not m:
        return [Problem(log_file, None, None, "segment file name is not a 20-digit base offset")]
    base = int(m.group(1))
    if prev_next is not None and base < prev_next:
        return [
            Problem(log_file, 0, base, f"segment base {base} is below the previous segment's next offset {prev_next}")
        ]
    expected = max(base, prev_next or 0)
    batches = _Batches(log_file)
    for pos, h, view in batches:
        if not crc_matches(view, 0, h.size, h.crc):
            return [Problem(log_file, pos, h.base_offset, "CRC-32C mismatch")]
        if h.base_offset < expected or h.last_offset_delta < 0:
            return [
                Problem(
                    log_file, pos, h.base_offset, f"offsets go backwards: base {h.base_offset} < expected {expected}"
                )
            ]
        try:
            records = list(iter_records(view))
        except InvalidBatch as exc:
            return [Problem(log_file, pos, h.base_offset, f"bad records: {exc}")]
        offsets = [r.offset for r in records if r.offset is not None]
        if (
            len(records) != h.records_count
            or offsets != sorted(set(offsets))
            or (offsets and (offsets[0] < h.base_offset or offsets[-1] > h.last_offset))
        ):
            return [Problem(log_file, pos, h.base_offset, "record offsets are outside the batch or unordered")]
        expected = h.next_offset
    if batches.problem is not None:
        return [batches.problem]
    for is_time in (False, True):
        problems = _check_index(log_file, base, is_time, allow_zero_tail=active)
        if problems:
            return problems
    return _check_txn_index(log_file)


def _check_txn_index(log_file: str) -> list[Problem]:
    """Every entry of a `.txnindex` names an ABORT marker of its producer in this segment, in
    increasing order (recovery rewrites the file if a crash lost entries)."""
    path = log_file[:-4] + ".txnindex"
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        data = f.read()
    if len(data) % TXN_ENTRY.size:
        return [Problem(path, len(data), None, f"size {len(data)} is not a multiple of {TXN_ENTRY.size}")]
    markers = {}
    for _, h, view in _Batches(log_file):
        if h.is_control:
            for r in iter_records(view):
                if control_type(r.key) == ABORT:
                    markers[h.base_offset] = h.producer_id
    prev = -1
    for i, t in enumerate(read_entries(data)):
        if t.last_offset <= prev or t.first_offset > t.last_offset or markers.get(t.last_offset) != t.producer_id:
            return [
                Problem(
                    path,
                    i * TXN_ENTRY.size,
                    t.last_offset,
                    f"aborted transaction entry {i} (producer {t.producer_id}, {t.first_offset}-"
                    f"{t.last_offset}) has no ABORT marker of its producer there, or is out of order",
                )
            ]
        prev = t.last_offset
    return []


def _check_index(log_file: str, base: int, is_time: bool, allow_zero_tail: bool = False) -> list[Problem]:
    path = log_file[:-4] + (".timeindex" if is_time else ".index")
    if not os.path.exists(path):
        return [Problem(path, None, None, "index file is missing")]
    with open(path, "rb") as f:
        data = f.read()
    entry = TimeIndex.ENTRY if is_time else OffsetIndex.ENTRY
    if len(data) % entry.size:
        return [Problem(path, len(data), None, f"size {len(data)} is not a multiple of {entry.size}")]
    if allow_zero_tail:
        used = -(-len(data.rstrip(b"\0")) // entry.size) * entry.size
        data = data[:used]
    headers = {pos: h for pos, h, _ in _Batches(log_file)}
    last_next = max((h.next_offset for h in headers.values()), default=base)
    prev = (-1, -1)
    for i, (a, b) in enumerate(entry.iter_unpack(data)):
        at = i * entry.size
        if is_time:
            if a <= prev[0] and i or b < prev[1] or not base <= base + b < max(last_next, base + 1):
                return [
                    Problem(
                        path,
                        at,
                        base + b,
                        f"time index entry {i} ({a}, {base + b}) is out of order or outside the segment",
                    )
                ]
        else:
            if a <= prev[0] or b <= prev[1]:
                return [Problem(path, at, base + a, f"index entry {i} does not increase")]
            h = headers.get(b)
            if h is None:
                return [Problem(path, at, base + a, f"index entry {i} position {b} is not a batch start")]
            if not h.base_offset <= base + a:
                return [Problem(path, at, base + a, f"index entry {i} offset is below its batch's base")]
        prev = (a, b)
    return []
