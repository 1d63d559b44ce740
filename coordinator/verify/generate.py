"""Generate realistic __consumer_offsets logs (plus a user topic) for the verifier.

Drives the real writer (coordinator.runtime.partition_writer.PartitionWriter -> groups/records.py -> storage Log):
commit streams with heavy overwrites, group-metadata churn, group deletions (group + offset
tombstones) and offset expiry; with `transactions` > 0 that share of commits are TxnOffsetCommits
(a transactional batch of the group's producer; the transaction may add batches, then ends with
a COMMIT or, one time in four, an ABORT marker the next time its group is drawn; nothing else
touches a group meanwhile; transactions open at the end stay open; only committed ones reach
the ledger, at their marker). Two phases: phase 1, a cleaning round (stamps tombstone delete
horizons), a clock jump past delete.retention.ms, phase 2; then `before/` is copied and the
second round cleans `after/`. The ledger (ledger.parquet, ledger.py) lists every acknowledged
commit and deletion. Cleaning is storage.cleaner.Cleaner, forced rounds at a chosen time.
Usage: python -m coordinator.verify.generate OUT_DIR --records N [--fault KIND ...]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
from multiprocessing import Pool
from typing import Any

from coordinator.groups.placement import OFFSETS_TOPIC, partition_for
from coordinator.groups.record_types import (
    GroupMetadataRecord,
    GroupTombstone,
    MemberSnapshot,
    OffsetCommitRecord,
    OffsetTombstone,
)
from coordinator.groups.records import encode_record
from coordinator.runtime.operation import EndMarker
from coordinator.runtime.partition_writer import PartitionWriter
from coordinator.verify.faults import FAULTS, inject
from coordinator.verify.ledger import LedgerWriter, read_events
from storage.batch import Record
from storage.cleaner import Cleaner
from storage.log import Log, LogConfig
from storage.log_manager import LogManager

__all__ = ["generate", "main", "Clock"]

T0 = 1_700_000_000_000
DAY = 86_400_000


class Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def time_ms(self) -> int:
        return self.now


def clean_partition(path: str, now_ms: int, retention_ms: int, segment_bytes: int) -> None:
    """One forced cleaning round at `now_ms` with storage's cleaner."""
    log = Log.open(
        path,
        LogConfig(
            segment_bytes=segment_bytes,
            cleanup_policy="compact",
            durability="interval",
            retention_ms=-1,
            delete_retention_ms=retention_ms,
        ),
        Clock(now_ms),
    )
    try:
        Cleaner().clean(log, force=True)
    finally:
        log.close()


def _worker(args: tuple) -> tuple[int, str]:
    (wid, parts, out, records, groups, num_partitions, segment_bytes, seed, retention, txn_share) = args
    rng = random.Random(seed * 1000 + wid)
    clock = Clock(T0)
    config = LogConfig(
        segment_bytes=segment_bytes,
        cleanup_policy="compact",
        durability="interval",
        retention_ms=-1,
        delete_retention_ms=retention,
    )
    data = os.path.join(out, "after")
    olog = PartitionWriter(OFFSETS_TOPIC, LogManager(data, clock), num_partitions, config, clock, encode_record)
    mine = [g for g in (f"group-{i:06d}" for i in range(groups)) if partition_for(g, num_partitions) in parts]
    topics = [f"topic-{i:03d}" for i in range(max(4, groups // 50))]
    subs = {g: [(t, p) for t in rng.sample(topics, 2) for p in range(rng.randint(2, 12))] for g in mine}
    committed: dict[str, dict[tuple[str, int], int]] = {g: {} for g in mine}
    gen = {g: 0 for g in mine}
    ledger_path = os.path.join(out, f"ledger.{wid}.parquet")
    seq = wid << 40
    written = 0
    # group -> its open transaction's ledger entries; its producer id is fixed per group
    open_txn: dict[str, list[dict[str, Any]]] = {}
    producer = {g: (wid << 32) + i for i, g in enumerate(mine)}
    with LedgerWriter(ledger_path) as ledger:

        def ack(entries: list[dict]) -> None:
            nonlocal seq
            for e in entries:
                seq += 1
                e["seq"], e["ack_ms"] = seq, clock.now
                ledger.write(e)

        def op(records: list, entries: list[dict], txn: bool = False) -> None:
            nonlocal written
            # One op is one group's records: one batch on its partition. durability="interval":
            # nothing to wait for. A transaction's commits are acknowledged at its COMMIT.
            g = records[0].group_id
            olog.append(partition_for(g, num_partitions), records, producer=(producer[g], 0) if txn else None)
            if txn:
                open_txn.setdefault(g, []).extend(entries)
            else:
                ack(entries)
            written += len(records)

        def end_txn(g: str, commit: bool) -> None:
            nonlocal written
            olog.append(partition_for(g, num_partitions), [], marker=EndMarker(producer[g], 0, commit, 0))
            written += 1
            entries = open_txn.pop(g)
            if commit:
                for e in entries:
                    committed[g][(e["topic"], e["partition"])] = e["offset"]
                ack(entries)

        def end_all() -> None:
            for g in sorted(open_txn):
                end_txn(g, rng.random() < 0.75)

        def phase(target: int) -> None:
            while written < target and mine:
                clock.now += rng.randint(1, 50)
                g = rng.choice(mine)
                roll = rng.random()
                if g in open_txn and rng.random() < 0.7:  # EndTxn: WriteTxnMarkers
                    end_txn(g, rng.random() < 0.75)
                    continue
                txn = g in open_txn or (txn_share > 0 and rng.random() < txn_share)
                if txn or roll < 0.90:  # (Txn)OffsetCommit for a few partitions (one batch)
                    tps = rng.sample(subs[g], min(len(subs[g]), rng.randint(1, 6)))
                    recs: list[Any] = []
                    ents: list[dict[str, Any]] = []
                    for t, p in tps:
                        off = committed[g].get((t, p), 0) + rng.randint(1, 500)
                        meta = "" if rng.random() < 0.7 else f"m{rng.randint(0, 999)}"
                        expire = clock.now + DAY if rng.random() < 0.02 else None
                        if not txn:
                            committed[g][(t, p)] = off
                        recs.append(OffsetCommitRecord(g, t, p, off, rng.randint(0, 5), meta, clock.now, expire))
                        ents.append(
                            {"op": "commit", "group": g, "topic": t, "partition": p, "offset": off, "metadata": meta}
                        )
                    op(recs, ents, txn)
                elif roll < 0.97:  # rebalance: new generation written
                    gen[g] += 1
                    members = tuple(
                        MemberSnapshot(
                            f"m-{g}-{i}", None, "client", "/10.0.0.1", 30000, 10000, b"\x00\x01sub", b"\x00\x01asg"
                        )
                        for i in range(rng.randint(1, 3))
                    )
                    op(
                        [GroupMetadataRecord(g, "consumer", gen[g], "range", members[0].member_id, clock.now, members)],
                        [],
                    )
                elif roll < 0.985 and committed[g]:  # expiry / OffsetDelete of one partition
                    t, p = rng.choice(sorted(committed[g]))
                    del committed[g][(t, p)]
                    op([OffsetTombstone(g, t, p)], [{"op": "delete_offset", "group": g, "topic": t, "partition": p}])
                else:  # DeleteGroups: offset tombstones + group tombstone in one batch
                    recs = [OffsetTombstone(g, t, p) for t, p in sorted(committed[g])]
                    committed[g] = {}
                    op(recs + [GroupTombstone(g)], [{"op": "delete_group", "group": g}])

        phase(int(records * 0.3))
        end_all()
        # Some groups go away for good mid-phase-1: their tombstones get a delete horizon in
        # the first round and are past it at the second (what "expired tombstone" tests need).
        for g in mine[::10]:
            recs = [OffsetTombstone(g, t, p) for t, p in sorted(committed[g])]
            committed[g] = {}
            op(recs + [GroupTombstone(g)], [{"op": "delete_group", "group": g}])
        mine = [g for i, g in enumerate(mine) if i % 10]
        phase(int(records * 0.6))
        end_all()
        olog.close()
        for p in parts:
            d = os.path.join(data, f"__consumer_offsets-{p}")
            if os.path.isdir(d):
                clean_partition(d, clock.now, retention, segment_bytes)
        clock.now += retention + DAY  # tombstones stamped above are now past their horizon
        olog = PartitionWriter(OFFSETS_TOPIC, LogManager(data, clock), num_partitions, config, clock, encode_record)
        phase(records)
        olog.close()
    return clock.now, ledger_path


def _user_topic(out: str, records: int, segment_bytes: int, seed: int) -> None:
    """A plain compacted user topic (non-coordinator keys and values) next to the offsets,
    with batches in every codec so the compressed decode paths are exercised too."""
    rng = random.Random(seed)
    clock = Clock(T0)
    log = Log.open(
        os.path.join(out, "after", "orders-0"),
        LogConfig(segment_bytes=segment_bytes, cleanup_policy="compact", durability="interval"),
        clock,
    )
    for i in range(0, records, 10):
        clock.now += 7
        recs = [
            Record(
                key=f"order-{rng.randint(0, records // 20)}".encode(),
                value=None if rng.random() < 0.03 else os.urandom(rng.randint(10, 80)),
            )
            for _ in range(10)
        ]
        log.append_records(recs, compression=(i // 10) % 5)  # none, gzip, snappy, lz4, zstd
    log.close()


def generate(
    out: str,
    *,
    records: int,
    partitions: int = 8,
    groups: int | None = None,
    segment_bytes: int = 100 << 20,
    seed: int = 1,
    workers: int = 1,
    user_topic_records: int = 0,
    retention_ms: int = DAY,
    transactions: float = 0.0,
    faults: list[str] | tuple[str, ...] = (),
) -> dict:
    """Write OUT/before, OUT/after, OUT/ledger.parquet, OUT/manifest.json; returns the manifest.
    `transactions`: the share of offset commits made in transactions (TxnOffsetCommit)."""
    os.makedirs(os.path.join(out, "after"), exist_ok=True)
    groups = groups or max(20, records // 2000)
    workers = max(1, min(workers, partitions))
    jobs = [
        (
            w,
            set(range(w, partitions, workers)),
            out,
            records // workers,
            groups,
            partitions,
            segment_bytes,
            seed,
            retention_ms,
            transactions,
        )
        for w in range(workers)
    ]
    if workers == 1:
        results = [_worker(jobs[0])]
    else:
        with Pool(workers) as pool:
            results = pool.map(_worker, jobs)
    if user_topic_records:
        _user_topic(out, user_topic_records, segment_bytes, seed)
    now = max(r[0] for r in results)
    with LedgerWriter(os.path.join(out, "ledger.parquet")) as dst:
        for _, path in results:
            for e in read_events(path):
                dst.write(e)
            os.unlink(path)
    before, after = os.path.join(out, "before"), os.path.join(out, "after")
    shutil.rmtree(before, ignore_errors=True)
    shutil.copytree(after, before)
    clean_time = now + 1000
    for name in sorted(os.listdir(after)):
        clean_partition(os.path.join(after, name), clean_time, retention_ms, segment_bytes)
    manifest: dict[str, Any] = {
        "before": before,
        "after": after,
        "ledger": os.path.join(out, "ledger.parquet"),
        "cleaned_at_ms": clean_time,
        "delete_retention_ms": retention_ms,
        "records": records,
        "partitions": partitions,
        "groups": groups,
        "transactions": transactions,
        "cleaner": "storage.cleaner.Cleaner (forced rounds)",
        "faults": [],
    }
    for i, kind in enumerate(faults):  # the i-th fault goes to the i-th biggest partition
        manifest["faults"].append(inject(out, kind, manifest, target=i))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m coordinator.verify.generate", description="Generate __consumer_offsets logs for kgc verify."
    )
    ap.add_argument("out_dir")
    ap.add_argument("--records", type=int, required=True, help="records to write (approx.)")
    ap.add_argument("--partitions", type=int, default=8, help="__consumer_offsets partitions")
    ap.add_argument("--groups", type=int, default=None)
    ap.add_argument("--segment-bytes", type=int, default=100 << 20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--user-topic-records", type=int, default=0)
    ap.add_argument(
        "--transactions", type=float, default=0.0, help="share of offset commits made in transactions (0-1)"
    )
    ap.add_argument("--fault", action="append", default=[], choices=sorted(FAULTS))
    a = ap.parse_args(argv)
    m = generate(
        a.out_dir,
        records=a.records,
        partitions=a.partitions,
        groups=a.groups,
        segment_bytes=a.segment_bytes,
        seed=a.seed,
        workers=a.workers,
        user_topic_records=a.user_topic_records,
        transactions=a.transactions,
        faults=a.fault,
    )
    json.dump(m, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
