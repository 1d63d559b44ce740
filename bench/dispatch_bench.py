"""Server CPU of one request without the socket: `dispatch(frame)` on an in-process server, in a
loop, for Heartbeat v3 and OffsetCommit v8 (1 and 32 partitions) of one stable member.

    .venv/bin/python bench/dispatch_bench.py [--n 20000] [--rounds 1] [--profile] [--mode interval]
    KGC_NATIVE=0 .venv/bin/python bench/dispatch_bench.py      # ignore the compiled modules
    KGC_BENCH_TREE=/work/main .venv/bin/python bench/dispatch_bench.py   # another checkout's server
    .venv/bin/python bench/dispatch_bench.py --gc off   # no young collections, as `kgc serve` runs

What request_bench.py measures minus the socket reads and writes: decode, handler, operation,
records, batch encode, append, durability hand-off, response encode. Prints which hot modules
run compiled (make native), then us per request (and with --profile the top functions by own
time). Asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import statistics
import sys
import tempfile
import time

import trio

# KGC_BENCH_TREE=/work/main runs another checkout's server with this script (an A/B in one run).
sys.path.insert(0, os.environ.get("KGC_BENCH_TREE") or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from coordinator.embed.embedded import open_server  # noqa: E402
from coordinator.groups import records  # noqa: E402
from coordinator.net.dispatch import Connection, dispatch  # noqa: E402
from protocol.api import ApiKey  # noqa: E402
from protocol.codec import decode_response, encode_request  # noqa: E402
from protocol.headers import RequestHeader, decode_response_header, encode_request_header  # noqa: E402
from protocol.messages.heartbeat import HeartbeatRequest  # noqa: E402
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol  # noqa: E402
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic  # noqa: E402
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment  # noqa: E402
from storage.batch import native as storage_native  # noqa: E402


def running_modules() -> str:
    """Which copy of each compiled hot module runs: "compiled" or "python" (this script also runs
    against an older checkout on PYTHONPATH, which may lack some: "-")."""
    modules = {"kernels": storage_native.KERNELS, "offset_encoding": getattr(records, "_ENCODING", None)}
    copies = {k: "-" if m is None else "python" for k, m in modules.items()}
    copies.update({k: "compiled" for k, m in modules.items() if m is not None and m.__name__.endswith("_native")})
    return ", ".join(f"{k} {copy}" for k, copy in copies.items())


def payload(key: int, version: int, request: object, cid: int = 1) -> bytes:
    return encode_request_header(RequestHeader(key, version, cid, "bench")) + encode_request(key, version, request)


async def call(broker, conn, key, version, request):
    head, body = await dispatch(payload(key, version, request), conn, broker)
    data = head + body
    _, offset = decode_response_header(data, key, version)
    return decode_response(key, version, data, offset)


async def bench_frames(broker, conn) -> dict[str, bytes]:
    """Join and sync one member (one stable group), then the frames to time: its Heartbeat v3 and
    OffsetCommit v8 of 1 and 32 partitions of topic "bench" (also bench/dispatch_instructions.py's)."""
    group, member = "dispatch-bench", ""
    for _ in range(3):
        joined = await call(
            broker,
            conn,
            ApiKey.JOIN_GROUP,
            5,
            JoinGroupRequest(
                group_id=group,
                session_timeout_ms=30000,
                rebalance_timeout_ms=30000,
                member_id=member,
                protocol_type="consumer",
                protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")],
            ),
        )
        member = joined.member_id
        if joined.error_code == 0:
            break
    generation = joined.generation_id
    await call(
        broker,
        conn,
        ApiKey.SYNC_GROUP,
        3,
        SyncGroupRequest(
            group_id=group,
            generation_id=generation,
            member_id=member,
            assignments=[SyncGroupRequestAssignment(member_id=member, assignment=b"")],
        ),
    )

    def commit(partitions: int) -> bytes:
        return payload(
            ApiKey.OFFSET_COMMIT,
            8,
            OffsetCommitRequest(
                group_id=group,
                generation_id_or_member_epoch=generation,
                member_id=member,
                topics=[
                    OffsetCommitRequestTopic(
                        name="bench",
                        partitions=[
                            OffsetCommitRequestPartition(partition_index=p, committed_offset=p, committed_metadata="")
                            for p in range(partitions)
                        ],
                    )
                ],
            ),
        )

    return {
        "Heartbeat": payload(
            ApiKey.HEARTBEAT, 3, HeartbeatRequest(group_id=group, generation_id=generation, member_id=member)
        ),
        "OffsetCommit 1p": commit(1),
        "OffsetCommit 32p": commit(32),
    }


async def main(n: int, profile: bool, mode: str, rounds: int, gc_on: bool) -> None:
    with tempfile.TemporaryDirectory() as data:
        async with open_server(data, settings={"log.flush.mode": mode}, topics={"bench": 32}) as server:
            broker, conn = server.broker, Connection(1, "127.0.0.1")
            frames = await bench_frames(broker, conn)
            print(running_modules())
            if not gc_on:  # as `kgc serve` runs (runtime/gc_governor.py): frozen, no automatic collections
                gc.freeze()
                gc.disable()
            for name, frame in frames.items():
                count = n // 4 if name.endswith("32p") else n
                prof = cProfile.Profile() if profile else None
                if prof:
                    prof.enable()
                cpus = []
                for _ in range(rounds):
                    t0 = time.process_time()
                    for _ in range(count):
                        await dispatch(frame, conn, broker)
                    cpus.append((time.process_time() - t0) / count * 1e6)
                if prof:
                    prof.disable()
                print(
                    f"{name:18s} {min(cpus):7.1f} us CPU per request, best of {rounds} "
                    f"(median {statistics.median(cpus):.1f}; dispatch only, {count} requests each)"
                )
                if prof:
                    pstats.Stats(prof).sort_stats("tottime").print_stats(22)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--mode", default="interval")
    parser.add_argument("--rounds", type=int, default=1, help="time each request this many times; print the best")
    parser.add_argument(
        "--gc", choices=("on", "off"), default="on", help="off: as `kgc serve` runs (frozen, no automatic collections)"
    )
    args = parser.parse_args()
    trio.run(main, args.n, args.profile, args.mode, args.rounds, args.gc == "on")
