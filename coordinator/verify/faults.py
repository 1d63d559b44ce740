"""Fault injection for the generator and the tests: break a generated dataset in one precise way
and say exactly where (check id, file, position, offset) the verifier must report it.

Every fault edits OUT/after (or the ledger) the way a buggy writer or cleaner would, and
keeps everything else well formed: a rewritten segment gets fresh, correct indexes, so only the
intended invariant breaks. Choices are deterministic for a given dataset and seed. Victims
are records of plain batches whose keys no transaction touches (so that "the latest record" is
unambiguous); aborted_txn_acknowledged finds its location by replaying the partition as Kafka's
OffsetMetadataManager does (pending offsets per producer, materialised by a COMMIT marker).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from coordinator.verify.layout import list_partition_dirs, read_index, segment_path
from coordinator.verify.ledger import append_event
from coordinator.verify.txn import TXN_BITS
from storage.batch import BatchHeader, Record, decode_header, encode_batch, iter_records, read_marker
from storage.segment import LogSegment

__all__ = ["FAULTS", "inject", "iter_batches", "rewrite_segment"]


def iter_batches(log_path: str) -> Iterator[tuple[int, BatchHeader, bytes]]:
    with open(log_path, "rb") as f:
        data = f.read()
    pos = 0
    while len(data) - pos >= 61:
        h = decode_header(data, pos)
        if h.size < 61 or pos + h.size > len(data):
            return
        yield pos, h, data[pos : pos + h.size]
        pos += h.size


def rewrite_segment(directory: str, base: int, batches: list[bytes]) -> list[int]:
    """Replace a segment by `batches` with freshly built indexes; returns batch positions."""
    for ext in (".log", ".index", ".timeindex"):
        os.unlink(segment_path(directory, base, ext))
    seg = LogSegment(directory, base, index_interval_bytes=4096, segment_index_bytes=10 << 20)
    positions = []
    for raw in batches:
        positions.append(seg.size)
        seg.append(raw, decode_header(raw))
    seg.become_inactive()
    seg.close()
    return positions


def _reencode(h: BatchHeader, recs: list[Record], base: int | None = None) -> bytes:
    return encode_batch(
        h.base_offset if base is None else base,
        recs,
        compression=h.compression,
        producer_id=h.producer_id,
        producer_epoch=h.producer_epoch,
        base_sequence=h.base_sequence,
        last_offset_delta=h.last_offset_delta,
        transactional=h.is_transactional,
        delete_horizon_ms=h.delete_horizon_ms if recs else None,
    )


def _dirs(root: str) -> list:
    """Offsets partitions with at least two segments, biggest first (deterministic)."""
    ds = [p for p in list_partition_dirs(root) if len(p.segments) >= 2 and p.topic == "__consumer_offsets"]
    return sorted(ds, key=lambda p: (-len(p.segments), p.name))


def _loc(check: str, file: str, pos: int | None, off: int | None, **extra: Any) -> dict:
    return {"check": check, "file": file, "position": pos, "offset": off, **extra}


def _targets(out: str, target: int) -> list:
    """Candidate partition dirs, starting with the `target`-th (so that several faults in one
    dataset land in different partitions)."""
    ds = _dirs(os.path.join(out, "after"))
    t = target % len(ds)
    return ds[t:] + ds[:t]


def _cleaned_batches(out: str, target: int) -> Iterator[tuple[Any, int, int, BatchHeader, bytes]]:
    """(dir, segment, position, header, bytes) of every non-empty plain batch in cleaned segments."""
    for p in _targets(out, target):
        for base in p.segments[:-1]:
            for pos, h, raw in iter_batches(segment_path(p.path, base)):
                if h.records_count and not h.attributes & TXN_BITS:
                    yield p, base, pos, h, raw


def _flipped_byte(out: str, m: dict, t: int) -> dict:
    p, base, pos, h, _ = next(_cleaned_batches(out, t))
    path = segment_path(p.path, base)
    with open(path, "r+b") as f:
        f.seek(pos + 61 + 2)
        b = f.read(1)
        f.seek(pos + 61 + 2)
        f.write(bytes([b[0] ^ 0x40]))
    return _loc("S1", path, pos, h.base_offset)


def _truncated_batch(out: str, m: dict, t: int) -> dict:
    p = _targets(out, t)[0]
    path = segment_path(p.path, p.segments[0])
    pos, h, _ = list(iter_batches(path))[-1]
    os.truncate(path, pos + h.size // 2)
    return _loc("S4", path, pos, h.base_offset)


def _index_mid_batch(out: str, m: dict, t: int) -> dict:
    for p in _targets(out, t):
        for base in p.segments:
            idx = segment_path(p.path, base, ".index")
            entries = read_index(idx)
            if entries:
                i = len(entries) // 2
                rel, pos = entries[i]
                with open(idx, "r+b") as f:
                    f.seek(i * 8 + 4)
                    f.write((pos + 7).to_bytes(4, "big"))
                return _loc("S5", idx, i * 8, base + rel)
    raise RuntimeError("no index entry to corrupt (generate more data)")


def _removed_latest(out: str, m: dict, t: int) -> dict:
    for p, base, pos, h, raw in _cleaned_batches(out, t):
        recs = list(iter_records(raw))
        victim = next((r for r in recs if r.value is not None), None)
        if victim is None:
            continue
        batches = [b for _, _, b in iter_batches(segment_path(p.path, base))]
        i = [q for q, _, _ in iter_batches(segment_path(p.path, base))].index(pos)
        batches[i] = _reencode(h, [r for r in recs if r is not victim])
        rewrite_segment(p.path, base, batches)
        assert victim.offset is not None  # records read back from a log always have one
        file, bpos = _locate(os.path.join(out, "before", p.name), victim.offset)
        return _loc("C2", file, bpos, victim.offset)
    raise RuntimeError("no cleaned record to remove")


def _renumbered_offset(out: str, m: dict, t: int) -> dict:
    before: dict[str, set[int]] = {}
    for p, base, pos, h, raw in _cleaned_batches(out, t):
        if p.name not in before:
            pre = os.path.join(out, "before", p.name)
            before[p.name] = {
                bh.base_offset
                for f in sorted(os.listdir(pre))
                if f.endswith(".log")
                for _, bh, _ in iter_batches(os.path.join(pre, f))
            }
        listing = list(iter_batches(segment_path(p.path, base)))
        i = [q for q, _, _ in listing].index(pos)
        nxt = listing[i + 1][1].base_offset if i + 1 < len(listing) else p.segments[p.segments.index(base) + 1]
        if h.last_offset + 1 >= nxt or h.base_offset + 1 in before[p.name]:
            continue  # no room, or the moved envelope would be a before batch's (no C5)
        recs = [Record(_offset(r) + 1, r.timestamp, r.key, r.value, r.headers) for r in iter_records(raw)]
        batches = [b for _, _, b in listing]
        batches[i] = _reencode(h, recs, base=h.base_offset + 1)
        new_pos = rewrite_segment(p.path, base, batches)[i]
        return _loc("C1", segment_path(p.path, base), new_pos, recs[0].offset)
    raise RuntimeError("no batch with room to renumber")


def _pre_records(out: str, name: str, end: int) -> list[tuple[str, int, int, BatchHeader, Record]]:
    """Records of the before log's plain batches below `end`, of keys no transaction touches."""
    pdir = os.path.join(out, "before", name)
    rows = []
    in_txn: set[bytes | None] = set()
    for p in list_partition_dirs(os.path.join(out, "before")):
        if p.name != name:
            continue
        for base in p.segments:
            for pos, h, raw in iter_batches(segment_path(pdir, base)):
                if h.attributes & TXN_BITS:
                    in_txn.update(r.key for r in iter_records(raw))
                elif h.base_offset < end:
                    rows += [(segment_path(pdir, base), base, pos, h, r) for r in iter_records(raw)]
    return [row for row in rows if row[4].key not in in_txn]


def _reinsert(out: str, m: dict, t: int, pick: Callable[[list, dict], Any], check: str) -> dict:
    """Put a record from `before` that cleaning removed back into `after`."""
    for p in _targets(out, t):
        end = p.segments[-1]
        rows = _pre_records(out, p.name, end)
        latest = {r.key: r.offset for _, _, _, _, r in rows}
        row = pick(rows, latest)
        if row is None:
            continue
        _, _, _, h, rec = row
        seg = max(b for b in p.segments if b <= h.base_offset)
        listing = list(iter_batches(segment_path(p.path, seg)))
        batches, at = [], None
        for _, bh, raw in listing:
            if bh.base_offset == h.base_offset:
                recs = sorted(list(iter_records(raw)) + [rec], key=lambda r: r.offset or 0)
                batches.append(_reencode(h if bh.delete_horizon_ms is None else bh, recs))
                at = len(batches) - 1
            else:
                if at is None and bh.base_offset > h.base_offset:
                    batches.append(_reencode(h, [rec]))
                    at = len(batches) - 1
                batches.append(raw)
        if at is None:
            batches.append(_reencode(h, [rec]))
            at = len(batches) - 1
        pos = rewrite_segment(p.path, seg, batches)[at]
        return _loc(check, segment_path(p.path, seg), pos, rec.offset)
    raise RuntimeError(f"no record to re-insert for {check}")


def _stale_value(out: str, m: dict, t: int) -> dict:
    def pick(rows: list, latest: dict) -> Any:
        return next((row for row in rows if row[4].value is not None and latest[row[4].key] != row[4].offset), None)

    return _reinsert(out, m, t, pick, "C3")


def _expired_tombstone_kept(out: str, m: dict, t: int) -> dict:
    now = m["cleaned_at_ms"]

    def pick(rows: list, latest: dict) -> Any:
        return next(
            (
                row
                for row in rows
                if row[4].value is None
                and latest[row[4].key] == row[4].offset
                and row[3].delete_horizon_ms is not None
                and row[3].delete_horizon_ms <= now
            ),
            None,
        )

    return _reinsert(out, m, t, pick, "C6")


def _locate(pdir: str, offset: int) -> tuple[str, int]:
    for p in list_partition_dirs(os.path.dirname(pdir)):
        if p.path != pdir:
            continue
        for base in p.segments:
            for pos, h, _ in iter_batches(segment_path(pdir, base)):
                if h.base_offset <= offset <= h.last_offset:
                    return segment_path(pdir, base), pos
    raise LookupError(offset)


def _offset(r: Record) -> int:
    assert r.offset is not None  # records read back from a log always have one
    return r.offset


def _lost_ack_commit(out: str, m: dict, t: int) -> dict:
    from coordinator.groups.records import OffsetCommitRecord, decode_record

    p = _targets(out, t)[0]
    last: dict[bytes, tuple] = {}
    in_txn: set[bytes | None] = set()
    for base in p.segments:
        for pos, h, raw in iter_batches(segment_path(p.path, base)):
            for r in iter_records(raw):
                if h.attributes & TXN_BITS:
                    in_txn.add(r.key)
                elif r.key is not None:
                    last[r.key] = (segment_path(p.path, base), pos, r)
    for key in sorted(k for k in last if k not in in_txn):
        file, pos, r = last[key]
        rec = decode_record(key, r.value)
        if isinstance(rec, OffsetCommitRecord):
            append_event(
                m["ledger"],
                {
                    "op": "commit",
                    "group": rec.group_id,
                    "topic": rec.topic,
                    "partition": rec.partition,
                    "offset": rec.offset + 1000,
                    "metadata": rec.metadata,
                    "seq": 1 << 62,
                    "ack_ms": m["cleaned_at_ms"],
                },
            )
            return _loc("G2", file, pos, r.offset, group=rec.group_id, topic=rec.topic, partition=rec.partition)
    raise RuntimeError("no live commit found")


def _kafka_replay(pdir: str, segments: tuple[int, ...]) -> tuple[dict, list, dict]:
    """OffsetMetadataManager's replay of a partition, by raw key: (committed: key -> location
    (file, position, record) of the record that holds the key's offset, a tombstone included;
    aborted: [(key, location)]; physically last location of every key)."""
    committed: dict[bytes, tuple] = {}
    pending: dict[int, dict[bytes, tuple]] = {}
    aborted: list[tuple[bytes, tuple]] = []
    last: dict[bytes, tuple] = {}
    for base in segments:
        file = segment_path(pdir, base)
        for pos, h, raw in iter_batches(file):
            if h.is_control:
                marker = read_marker(raw)
                txn = pending.pop(h.producer_id, {}) if marker is not None else {}
                for key, loc in txn.items():
                    if not marker or not marker.commit:
                        aborted.append((key, loc))
                    elif key not in committed or _offset(loc[2]) > _offset(committed[key][2]):
                        committed[key] = loc
                continue
            for r in iter_records(raw):
                if r.key is None:
                    continue
                loc = last[r.key] = (file, pos, r)
                if h.is_transactional and r.value is not None:
                    pending.setdefault(h.producer_id, {})[r.key] = loc
                else:  # Kafka applies a tombstone at once, even in a transaction
                    committed[r.key] = loc
                    if r.value is None:  # ... and it drops the key's pending offsets
                        for txn in pending.values():
                            txn.pop(r.key, None)
    return committed, aborted, last


def _aborted_txn_acknowledged(out: str, m: dict, t: int) -> dict:
    """The ledger says an aborted transaction's offset was committed; the log's committed offset
    for that partition is elsewhere: G2 at the record that holds it (or at the partition dir)."""
    from coordinator.groups.placement import partition_for
    from coordinator.groups.records import OffsetCommitRecord, decode_record

    for p in _targets(out, t):
        committed, aborted, last = _kafka_replay(p.path, p.segments)
        for key, (_, _, r) in aborted:
            rec = decode_record(key, r.value)
            held = committed.get(key)
            if last[key][2] is not r or not isinstance(rec, OffsetCommitRecord):
                continue  # only a physically latest record makes a txn-blind verifier agree
            was = decode_record(key, held[2].value) if held is not None else None
            if isinstance(was, OffsetCommitRecord) and (was.offset, was.metadata) == (rec.offset, rec.metadata):
                continue
            append_event(
                m["ledger"],
                {
                    "op": "commit",
                    "group": rec.group_id,
                    "topic": rec.topic,
                    "partition": rec.partition,
                    "offset": rec.offset,
                    "metadata": rec.metadata,
                    "seq": 1 << 62,
                    "ack_ms": m["cleaned_at_ms"],
                },
            )
            if held is None:
                home = f"__consumer_offsets-{partition_for(rec.group_id, m['partitions'])}"
                return _loc("G2", os.path.join(out, "after", home), None, None)
            return _loc("G2", held[0], held[1], held[2].offset)
    raise RuntimeError("no aborted transaction whose record is its key's latest (generate with transactions)")


FAULTS: dict[str, Callable[[str, dict, int], dict]] = {
    "flipped_byte": _flipped_byte,
    "truncated_batch": _truncated_batch,
    "removed_latest": _removed_latest,
    "renumbered_offset": _renumbered_offset,
    "stale_value": _stale_value,
    "expired_tombstone_kept": _expired_tombstone_kept,
    "lost_ack_commit": _lost_ack_commit,
    "index_mid_batch": _index_mid_batch,
    "aborted_txn_acknowledged": _aborted_txn_acknowledged,
}


def inject(out: str, kind: str, manifest: dict, *, target: int = 0) -> dict:
    """Apply fault `kind` to the dataset at `out`, preferably in the `target`-th partition dir
    (by size); returns where it must be reported."""
    where = FAULTS[kind](out, manifest, target)
    return {"kind": kind, **where}
