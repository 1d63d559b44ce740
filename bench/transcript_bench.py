"""Benchmark: OffsetCommit requests per second with the transcript (and metrics) off and on.

A real server (EmbeddedServer, its own thread) takes commits from `--clients` blocking
connections, each committing `--partitions` offsets of its own standalone group (generation -1)
in a loop for `--seconds`. Same data-dir settings for every run; prints figures only.

    .venv/bin/python bench/transcript_bench.py --seconds 5 --clients 4
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

from coordinator.embed.embedded import EmbeddedServer
from coordinator.tools.kafka_connection import Connection
from protocol.api import ApiKey
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic


def client_loop(bootstrap: str, group: str, partitions: int, stop_at: float, counts: list[int], i: int) -> None:
    host, _, port = bootstrap.rpartition(":")
    conn = Connection(host, int(port), f"bench-{i}", timeout=30)
    n = 0
    while time.perf_counter() < stop_at:
        n += 1
        resp = conn.send(
            ApiKey.OFFSET_COMMIT,
            8,
            OffsetCommitRequest(
                group_id=group,
                generation_id_or_member_epoch=-1,
                member_id="",
                topics=[
                    OffsetCommitRequestTopic(
                        name="bench",
                        partitions=[
                            OffsetCommitRequestPartition(partition_index=p, committed_offset=n)
                            for p in range(partitions)
                        ],
                    )
                ],
            ),
        )
        assert resp.topics[0].partitions[0].error_code == 0, resp
    counts[i] = n
    conn.close()


def run(label: str, settings: dict, args: argparse.Namespace) -> float:
    with tempfile.TemporaryDirectory(prefix="kgc-bench-") as tmp:
        if "transcript.file" in settings:
            settings = {**settings, "transcript.file": str(Path(tmp) / "transcript.jsonl")}
        with EmbeddedServer(
            Path(tmp) / "data",
            topics={"bench": args.partitions},
            settings={**settings, "log.flush.mode": args.flush_mode},
        ) as server:
            counts = [0] * args.clients
            stop_at = time.perf_counter() + args.seconds
            threads = [
                threading.Thread(
                    target=client_loop, args=(server.bootstrap, f"bench-{i}", args.partitions, stop_at, counts, i)
                )
                for i in range(args.clients)
            ]
            start = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - start
            size = ""
            if "transcript.file" in settings:
                size = f", transcript {Path(settings['transcript.file']).stat().st_size / 1e6:.1f} MB"
    rate = sum(counts) / elapsed
    print(f"{label:<28} {sum(counts):>8} commits in {elapsed:5.2f} s = {rate:9.0f} commits/s{size}", flush=True)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=3, help="offsets per commit request")
    parser.add_argument("--flush-mode", default="group_commit", choices=("group_commit", "every_append", "interval"))
    args = parser.parse_args()
    print(
        f"{args.clients} clients x {args.partitions} offsets per OffsetCommit v8, {args.seconds:g} s each, "
        f"log.flush.mode={args.flush_mode}"
    )
    off = run("transcript off", {}, args)
    on = run("transcript on", {"transcript.file": ""}, args)
    both = run("transcript + metrics on", {"transcript.file": "", "metrics.port": 0}, args)
    print(
        f"transcript costs {100 * (1 - on / off):.0f}% of the commit rate; with metrics too "
        f"{100 * (1 - both / off):.0f}%"
    )


if __name__ == "__main__":
    main()
