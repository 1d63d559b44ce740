"""`kgc dump`: read-only printing of segment files, partition dirs and data dirs.

`dump` prints batches (and with deep=True records; a control record as its end-transaction
marker) in kafka-dump-log.sh's layout (DumpLogSegments), or JSON lines, and `.txnindex` /
`.snapshot` files as dumpTxnIndex / dumpProducerIdSnapshot print them. `check` (`kgc check`)
lives in log_check.py and is re-exported here. Nothing here opens a file for writing: files are
mmapped read-only, so it is safe to run against a live or crashed directory. Formats: FORMAT.md.
"""

from __future__ import annotations

import base64
import json as jsonlib
import os
from collections.abc import Callable
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
from .index import OffsetIndex, TimeIndex
from .log_check import SEGMENT_FILE_NAME, Problem, SegmentBatches, check, check_index, partition_dirs, segment_files
from .producer_snapshot import CorruptSnapshotError, read_snapshot
from .txn_index import read_entries

__all__ = ["dump", "check", "Problem", "Decoder"]

# (offset, key, value) -> (key text, payload text); how `kgc dump --offsets-decoder` plugs in.
Decoder = Callable[[int, "bytes | None", "bytes | None"], "tuple[str | None, str | None]"]


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
        for part in partition_dirs(path):
            for log_file in segment_files(part):
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
        m = SEGMENT_FILE_NAME.match(os.path.basename(path))
        out.write(f"Log starting offset: {int(m.group(1)) if m else 0}\n")
    batches = SegmentBatches(path)
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
    m = SEGMENT_FILE_NAME.match(os.path.basename(path))
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
    for problem in check_index(path[: path.rindex(".")] + ".log", base, is_time):
        out.write(f"Index problem: {problem}\n")
