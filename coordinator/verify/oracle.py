"""Single-process twin of the Spark job: the same checks with plain dicts, for tests and bench.

Structure comes from the shared scan (one split per segment, so no cross-split joins beyond
segment boundaries); records are decoded independently with storage.batch.iter_records and
groups.records.decode_record (not scan.py's fast decoder), streamed one partition at a time.
Batch trust rules match scan.py: framing stops at the first unframeable batch; CRC-bad or
unparseable batches contribute nothing. Transactions: a first pass over each partition lists
its end-transaction markers (storage's read_marker); a transactional batch counts only if the
first marker of its producer at a higher offset is a COMMIT (Kafka's OffsetMetadataManager
replay and its cleaner's aborted-transaction rule); control batches are never records.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from crc32c import crc32c

from coordinator.verify.layout import (
    active_bases,
    list_partition_dirs,
    log_starts,
    plan_splits,
    segment_path,
    served_segments,
)
from coordinator.verify.rules import Report, continuity, offsets_dir, replay_ledger
from coordinator.verify.scan import decode_latest, scan_split
from coordinator.verify.share_checks import SHARE_PREFIX, LatestShareRecord, decode_share_latest, share_violations
from storage.batch import BatchHeader, InvalidBatch, decode_header, iter_records, read_marker, verify_crc

__all__ = ["verify", "LogView"]

# record info: (offset, file, pos, timestamp, value_hash, tombstone, horizon, value, key)
OFF, FILE, POS, TS, VH, TOMB, HOR, VAL, KEY = range(9)


@dataclass
class LogView:
    root: str
    dirs: dict[str, str] = field(default_factory=dict)  # name -> path
    last: dict[tuple[str, Any], tuple] = field(default_factory=dict)  # (name, key) -> record
    r0: dict[tuple[str, Any], list] = field(default_factory=dict)  # -> [count, first, last]
    batches: dict[tuple[str, int], tuple] = field(default_factory=dict)
    leo: dict[str, int] = field(default_factory=dict)  # name -> log end offset
    max_ts: int = -1
    records: int = 0
    bytes: int = 0


def _trusted(path: str, view: LogView | None = None) -> Iterator[tuple[int, BatchHeader, bytes]]:
    """The CRC-valid batches (non-negative lastOffsetDelta and count) of a segment, up to the
    first one that cannot be framed."""
    with open(path, "rb") as f:
        data = f.read()
    if view is not None:
        view.bytes += len(data)
    pos, size = 0, len(data)
    while size - pos >= 61:
        h = decode_header(data, pos)
        if h.magic != 2 or h.size < 61 or pos + h.size > size:
            return
        raw = data[pos : pos + h.size]
        if verify_crc(raw) and h.last_offset_delta >= 0 and h.records_count >= 0:
            yield pos, h, raw
        pos += h.size


Markers = dict[int, tuple[list[int], list[bool]]]  # producer id -> (marker offsets, commit flags)


def _markers(paths: list[str]) -> Markers:
    out: Markers = {}
    for path in paths:
        for _, h, raw in _trusted(path):
            if h.is_control:
                try:
                    marker = read_marker(raw)
                except (InvalidBatch, IndexError, ValueError):
                    continue
                if marker is not None:
                    offsets, commits = out.setdefault(h.producer_id, ([], []))
                    offsets.append(h.base_offset)
                    commits.append(marker.commit)
    for offsets, commits in out.values():
        order = sorted(range(len(offsets)), key=offsets.__getitem__)
        offsets[:], commits[:] = [offsets[i] for i in order], [commits[i] for i in order]
    return out


def _counts(h: BatchHeader, markers: Markers) -> bool:
    """The batch's records are data that counts: plain, or in a transaction whose producer's
    next marker is a COMMIT."""
    if h.is_control:
        return False
    if not h.is_transactional:
        return True
    offsets, commits = markers.get(h.producer_id, ([], []))
    i = bisect_right(offsets, h.last_offset)
    return i < len(offsets) and commits[i]


def _walk(path: str, rend: int, name: str, view: LogView, markers: Markers) -> None:
    for pos, h, raw in _trusted(path, view):
        region = 1 if h.base_offset >= rend else 0
        view.batches[(name, h.base_offset)] = (
            h.last_offset,
            h.crc,
            h.size,
            h.producer_id,
            h.producer_epoch,
            h.base_sequence,
            region,
            path,
            pos,
        )
        view.max_ts = max(view.max_ts, h.max_timestamp)
        try:
            recs = list(iter_records(raw))
        except InvalidBatch:
            continue
        view.records += len(recs)
        if not _counts(h, markers):
            continue
        horizon = h.delete_horizon_ms
        for r in recs:
            tomb = r.value is None
            info = (
                r.offset,
                path,
                pos,
                r.timestamp,
                -1 if r.value is None else crc32c(r.value),
                tomb,
                horizon,
                r.value,
                r.key,
            )
            k = (name, r.key)
            view.last[k] = info
            if region == 0:
                a = view.r0.get(k)
                if a is None:
                    view.r0[k] = [1, info, info]
                else:
                    a[0] += 1
                    a[2] = info


def _scan_log(
    root: str, region_end: dict[str, int] | None, nparts: int, report: Report, log_start: dict[str, int] | None = None
) -> LogView:
    view = LogView(root)
    summaries = []
    splits = plan_splits(
        root, split_bytes=1 << 62, region_end=region_end, num_offsets_partitions=nparts, log_start=log_start
    )
    for split in splits:
        res = scan_split(split)
        for v in res.violations:
            report.add(*v)
        if res.summary is not None:
            summaries.append({f: getattr(res.summary, f) for f in res.summary.__slots__})
    viols, leo = continuity(summaries)
    for v in viols:
        report.add(*v)
    for pdir in list_partition_dirs(root):
        view.dirs[pdir.name] = pdir.path
        if pdir.path in leo:
            view.leo[pdir.name] = leo[pdir.path]
        rend = (region_end or {}).get(pdir.name, pdir.segments[-1] if pdir.segments else 0)
        paths = [segment_path(pdir.path, base) for base in served_segments(pdir, log_start)]
        markers = _markers(paths)
        for path in paths:
            _walk(path, rend, pdir.name, view, markers)
    return view


def _offsets_checks(view: LogView, ledger: str | None, nparts: int, report: Report) -> None:
    live: dict[tuple, tuple] = {}
    anyrec: dict[tuple, tuple] = {}
    group_tombs: dict[tuple[str, str], int] = {}
    groups: set[tuple[str, str]] = set()
    decoded: list[tuple[str, dict, tuple]] = []
    for (name, key), rec in view.last.items():
        if not name.startswith("__consumer_offsets-"):
            continue
        d = decode_latest(key, rec[VAL])
        if d["decode_error"] is not None:
            report.add("G1", rec[FILE], rec[POS], rec[OFF], f"latest record does not decode: {d['decode_error']}")
            continue
        if d["group"] is not None:
            groups.add((name, d["group"]))
        decoded.append((name, d, rec))
        if d["record_type"] == 2 and rec[TOMB]:
            group_tombs[(name, d["group"])] = rec[OFF]
    for name, d, rec in decoded:
        if d["record_type"] not in (0, 1):
            continue
        tp = (d["group"], d["topic"], d["partition"])
        anyrec[tp] = rec
        if not rec[TOMB]:
            live[tp] = (d["committed_offset"], d["metadata"], rec)
            t = group_tombs.get((name, d["group"]))
            if t is not None and rec[OFF] < t:
                report.add(
                    "G3",
                    rec[FILE],
                    rec[POS],
                    rec[OFF],
                    f"live offset of {tp} is older than its group's tombstone at {t}",
                )
    for name, group in groups if nparts > 0 else ():
        want = f"__consumer_offsets-{_partition_for(group, nparts)}"
        if want != name:
            report.add("G4", view.dirs[name], None, None, f"group {group!r} has records here but belongs in {want}")
    if ledger is None:
        return
    expected = replay_ledger(ledger)
    for tp in sorted(set(expected) | set(live)):
        exp, act = expected.get(tp), live.get(tp)
        if exp is not None and act is None:
            found = anyrec.get(tp)
            if found is None:
                report.add(
                    "G2",
                    offsets_dir(view.root, tp[0], nparts),
                    None,
                    None,
                    f"acknowledged commit {tp} -> {exp[1]} is missing from the log",
                )
            else:
                report.add(
                    "G2",
                    found[FILE],
                    found[POS],
                    found[OFF],
                    f"acknowledged commit {tp} -> {exp[1]} is missing (log has a tombstone)",
                )
        elif exp is not None and act is not None and (exp[1], exp[2]) != (act[0], act[1] or ""):
            rec = act[2]
            report.add(
                "G2",
                rec[FILE],
                rec[POS],
                rec[OFF],
                f"{tp}: log has offset {act[0]} metadata {act[1]!r}, acknowledged {exp[1]} {exp[2]!r}",
            )
        elif exp is None and act is not None:
            rec = act[2]
            report.add(
                "G2",
                rec[FILE],
                rec[POS],
                rec[OFF],
                f"{tp}: log has offset {act[0]} that was never acknowledged or was deleted",
            )


def _partition_for(group: str, n: int) -> int:
    from coordinator.groups.placement import partition_for

    return partition_for(group, n)


def _share_checks(view: LogView, nparts: int, report: Report) -> None:
    latest = [
        LatestShareRecord(name, key or b"", r[OFF], r[TOMB], r[FILE], r[POS], decode_share_latest(key, r[VAL]))
        for (name, key), r in view.last.items()
        if name.startswith(SHARE_PREFIX)
    ]
    for v in share_violations(latest, nparts):
        report.add(*v)


def _compaction_checks(pre: LogView, post: LogView, now: int, report: Report) -> None:
    for k in sorted(set(pre.r0) | set(post.r0), key=lambda k: (k[0], k[1] or b"")):
        if k[0].startswith(SHARE_PREFIX):
            continue  # not compacted: share_checks.py says what its pruning must keep
        p = pre.r0.get(k)
        a = post.r0.get(k)
        P = p[2] if p else None
        expired = P is not None and P[TOMB] and P[HOR] is not None and P[HOR] <= now
        if a is not None:
            count, first, last = a
            if last[TOMB] and (last[HOR] is None or last[HOR] <= now):
                report.add(
                    "C6", last[FILE], last[POS], last[OFF], "kept tombstone has no delete horizon or it has passed"
                )
            if count > 1:
                report.add(
                    "C3",
                    first[FILE],
                    first[POS],
                    first[OFF],
                    f"older record of the key survived ({count} records below the end offset)",
                )
            if P is None:
                report.add("C1", last[FILE], last[POS], last[OFF], "record is not in the before log")
            elif last[OFF] != P[OFF]:
                same = (last[VH], last[TOMB]) == (P[VH], P[TOMB])
                report.add(
                    "C1",
                    last[FILE],
                    last[POS],
                    last[OFF],
                    f"renumbered: was offset {P[OFF]}"
                    if same
                    else f"surviving record is not the key's latest (offset {P[OFF]})",
                )
            elif (last[VH], last[TOMB]) != (P[VH], P[TOMB]):
                report.add("C1", last[FILE], last[POS], last[OFF], "value changed by cleaning")
        if P is not None and not expired and (a is None or P[OFF] not in (a[1][OFF], a[2][OFF])):
            report.add("C2", P[FILE], P[POS], P[OFF], "latest record of the key was removed")
    envelopes = {(n, b, v[0], v[3], v[4], v[5]) for (n, b), v in pre.batches.items()}
    for (n, b), v in sorted(post.batches.items()):
        if v[6] == 0 and (n, b, v[0], v[3], v[4], v[5]) not in envelopes:
            report.add("C5", v[7], v[8], b, "batch envelope (base, last, producer) not in before")
    pre1 = {k: v for k, v in pre.batches.items() if v[6] == 1}
    post1 = {k: v for k, v in post.batches.items() if v[6] == 1}
    for k in sorted(set(pre1) | set(post1)):
        before_batch, after_batch = pre1.get(k), post1.get(k)
        if after_batch is None:
            assert before_batch is not None
            report.add("C4", before_batch[7], before_batch[8], k[1], "uncleanable batch missing after cleaning")
        elif before_batch is None or before_batch[:3] != after_batch[:3]:
            report.add("C4", after_batch[7], after_batch[8], k[1], "uncleanable batch differs from before")
    for name in sorted(set(pre.leo) | set(post.leo)):
        if pre.leo.get(name) != post.leo.get(name):
            report.add(
                "C5",
                post.dirs.get(name, os.path.join(post.root, name)),
                None,
                post.leo.get(name),
                f"log end offset changed from {pre.leo.get(name)}",
            )


def verify(
    data_dir: str,
    *,
    before: str | None = None,
    ledger: str | None = None,
    cleaned_at_ms: int | None = None,
    num_partitions: int = 50,
    share_partitions: int = 50,
) -> Report:
    """`num_partitions` 0 skips the placement check (G4), `share_partitions` 0 skips H2."""
    report = Report()
    t0 = time.perf_counter()
    region_end = active_bases(data_dir) if before else None
    post = _scan_log(data_dir, region_end, num_partitions, report)
    # Records DeleteRecords removed from the after image are gone from the before image too.
    pre = _scan_log(before, region_end, num_partitions, report, log_starts(data_dir)) if before else None
    t1 = time.perf_counter()
    _offsets_checks(post, ledger, num_partitions, report)
    _share_checks(post, share_partitions, report)
    report.stats = {"bytes": post.bytes, "records": post.records}
    if pre is not None:
        now = cleaned_at_ms if cleaned_at_ms is not None else max(pre.max_ts, post.max_ts)
        _compaction_checks(pre, post, now, report)
        report.stats.update(before_bytes=pre.bytes, before_records=pre.records)
    report.stats["phases"] = {"scan_s": round(t1 - t0, 3), "checks_s": round(time.perf_counter() - t1, 3)}
    return report
