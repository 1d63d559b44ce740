"""Share groups (KIP-932): kgc next to librdkafka's mock cluster (and an earlier kgc with
--baseline), each server in its own process, in the same run, with confluent-kafka's ShareConsumer.

    .venv/bin/python bench/share_bench.py [--quick] [--trials 3] [--records 100000] [--parts 1,2,3]
        [--groups 20] [--members 10] [--heartbeats 100] [--baseline DIR] [--profile PATH] [--in-process]

1. Scenarios (bench/share_scenarios.py), pass/fail by Kafka's rules with what was observed.
2. Speed: N records on 4 partitions, then 1 and 3 share consumers (implicit acks) in a new group:
   records/s from subscribe until every record was seen, server CPU per 1,000 records (/proc:
   10 ms ticks, so a short run is coarse).
3. ShareGroupHeartbeat v1 at steady state (member id + epoch only, as librdkafka sends between
   changes): 200 members in 20 groups on raw connections, back-to-back, a fixed number of
   requests: server CPU per request (user and kernel apart), latency p50/p99. The load generator
   shares the 2 cores. Before it, a probe: 10 members join in turn, then each heartbeats with the
   epoch of its join. --in-process: also this tree's dispatch() without sockets (share_inprocess.py);
   --profile PATH: part 3's kgc under cProfile (wall time: a busy machine inflates the syscalls).
Share groups start at the earliest offset: on kgc through the control plane (PATCH
/v1/share/settings {"share.auto.offset.reset": "earliest"}, control.requests.max=0 so no request
is tracked), on the mock through rd_kafka_mock_sharegroup_set_auto_offset_reset(1).
Where the mock differs from Kafka the bench prints why (from librdkafka's mock source).
Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import socket
import statistics
import struct
import sys
import tempfile
import time
import urllib.request
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from group_bench import RawMember, percentile  # noqa: E402
from servers import Running, start_kgc, start_mock  # noqa: E402
from share_inprocess import steady_heartbeat_cpu  # noqa: E402
from share_scenarios import SCENARIOS, TOPICS, Row, all_seen, offsets_seen, reader, run_all, wait  # noqa: E402

from interop.clients.share import FAST_SHARE_SETTINGS, produce_values, stop_all  # noqa: E402
from protocol.api import ApiKey  # noqa: E402
from protocol.codec import decode_response  # noqa: E402
from protocol.errors import DecodeError, ErrorCode  # noqa: E402
from protocol.headers import decode_response_header  # noqa: E402
from protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest  # noqa: E402
from tests.integration.raw_client import RawClient  # noqa: E402

LOCK_MS = 2000  # the "short" servers' record lock
KGC_SHORT = {
    "group.share.min.record.lock.duration.ms": 1000,
    "group.share.record.lock.duration.ms": LOCK_MS,
    "group.share.delivery.count.limit": 2,
}
MOCK_MAIN = {"auto_offset_reset": 1, "heartbeat_interval": 500, "session_timeout": 6000}
MOCK_SHORT = {**MOCK_MAIN, "record_lock_duration": LOCK_MS, "max_delivery_attempts": 2}

# Why the mock differs, from librdkafka's mock source (src/rdkafka_mock*.c at 2.16), printed under a
# scenario the mock fails where kgc passes.
SESSIONS = (
    "mock: two things release a member's acquired records that Kafka keeps acquired (until acked or the "
    "lock expires), so they are delivered again: ANY connection to the broker closing closes EVERY share "
    "session on it (rd_kafka_mock_connection_close -> rd_kafka_mock_sharegrps_node_connection_closed, by "
    "node id; see (g)), and a ShareFetch that forgets a partition after a rebalance releases the member's "
    "records there (rd_kafka_mock_handle_ShareFetch). Both happen while consumers join."
)
ASSIGN = (
    "mock: a partition goes to ONE member (rd_kafka_mock_sharegroup_assign_topic_partitions splits them "
    "like range); Kafka's SimpleAssignor shares a partition among members when they outnumber the "
    "partitions, so the second consumer gets nothing until the holder is fenced (session 6 s)."
)
DECREASE = (
    "mock: records released at a session close keep their delivery count (rd_kafka_mock_sgrp_record_release); "
    "Kafka gives it back (SharePartition.releaseAcquiredRecords, DeliveryCountOps.DECREASE)."
)
NOTES = {
    "a-implicit": [SESSIONS],
    "a-explicit": [SESSIONS],
    "e-stop": [ASSIGN],
    "e-kill": [ASSIGN, DECREASE],
    "f": [SESSIONS],
    "g": [SESSIONS],
}
SCANS = (
    "mock: for every record it acquires or acknowledges it walks the partition's message sets "
    "(rd_kafka_mock_msgset_find: 'FIXME: Maintain an index') and the in-flight list "
    "(rd_kafka_mock_sgrp_record_state_find), so its cost per record grows with the log."
)
EVERY_ANSWER = (
    "mock: every answer carries the member's whole assignment (rd_kafka_mock_handle_ShareGroupHeartbeat "
    "writes it whenever the member has one); Kafka sends it only when it changed, null otherwise."
)
TRAILING = (
    "mock: its ShareGroupHeartbeat answers end with {extra} byte(s) after the body: the handler writes the "
    "top-level tagged fields and rd_kafka_mock_connection_send_response writes them again; librdkafka "
    "ignores them, a strict decoder (ours) does not."
)

FENCING = (
    "mock: each assignment recalculation sets EVERY member's epoch to the new group epoch "
    "(rd_kafka_mock_sharegroup_assignment_recalculate) and it accepts only that or the previous one; in "
    "Kafka a member's epoch moves only in its own heartbeat answer, so the epoch it last got stays valid."
)


# -- the servers ---------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kgc_share(root: str, extra: dict[str, object], baseline: str | None) -> Running:
    port = free_port()
    settings = {**FAST_SHARE_SETTINGS, **extra, "control.port": port, "control.requests.max": 0}
    server = start_kgc(tempfile.mkdtemp(dir=root), settings=settings, topics=TOPICS, baseline=baseline)
    body = json.dumps({"share.auto.offset.reset": "earliest"}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/share/settings", body, {"Content-Type": "application/json"}, method="PATCH"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert json.load(answer)["share.auto.offset.reset"] == "earliest"
    except (OSError, AssertionError) as exc:  # e.g. a --baseline without share groups
        server.stop()
        raise SystemExit(f"{server.name}: cannot start share groups at the earliest offset: {exc}") from None
    return server


def start_pair(name: str, root: str, baseline: str | None) -> tuple[Running, Running]:
    """(main, short): Kafka's lock and delivery limit / a 2 s lock and a delivery limit of 2."""
    if name == "mock":
        return start_mock(TOPICS, share=MOCK_MAIN), start_mock(TOPICS, share=MOCK_SHORT)
    return kgc_share(root, {}, baseline), kgc_share(root, KGC_SHORT, baseline)


# -- 2: speed --------------------------------------------------------------------------------------------
def speed(server: Running, records: int, trials: int) -> dict[int, list[tuple[float, float, int] | None]]:
    """consumers -> per trial (records/s, server CPU s per 1,000 records, duplicates) or None (timed out)."""
    for start in range(0, records, 20_000):  # in chunks: the producer's queue holds 100,000
        produce_values(server.bootstrap, "speed", [str(i) for i in range(start, min(records, start + 20_000))], 4)
    out: dict[int, list[tuple[float, float, int] | None]] = {}
    for n in (1, 3):
        for trial in range(trials):
            cpu0, began = server.cpu_seconds(), time.monotonic()
            readers = [reader(f"c{i}", server.bootstrap, f"speed-{n}-{trial}", "speed") for i in range(n)]
            try:
                wait(partial(all_seen, readers, records), f"{records} records", timeout=120)
                wall, cpu = time.monotonic() - began, server.cpu_seconds() - cpu0
                dup = sum(c - 1 for c in offsets_seen(readers).values())
                out.setdefault(n, []).append((records / wall, cpu / records * 1000, dup))
            except AssertionError:
                out.setdefault(n, []).append(None)
            finally:
                stop_all(readers)
    return out


def describe_speed(trials: list[tuple[float, float, int] | None]) -> str:
    done = [t for t in trials if t is not None]
    if not done:
        return "timed out"
    rates, cpus = [t[0] for t in done], [t[1] for t in done]
    return (
        f"{statistics.median(rates):8.0f} records/s (min {min(rates):.0f}, max {max(rates):.0f})   "
        f"server CPU {statistics.median(cpus) * 1000:6.1f} ms per 1,000   dup {sum(t[2] for t in done)}"
        + (f"   timed out {len(trials) - len(done)}" if len(done) < len(trials) else "")
    )


# -- 3: ShareGroupHeartbeat at steady state --------------------------------------------------------------
def heartbeat(member_id: str, group: str, epoch: int, topics: list[str] | None = None) -> ShareGroupHeartbeatRequest:
    return ShareGroupHeartbeatRequest(
        group_id=group, member_id=member_id, member_epoch=epoch, subscribed_topic_names=topics
    )


def lenient(payload: bytes) -> tuple[Any, int]:
    """A ShareGroupHeartbeat v1 answer and how many bytes follow its body (the mock adds one)."""
    _, offset = decode_response_header(payload, ApiKey.SHARE_GROUP_HEARTBEAT, 1)
    for extra in range(4):
        try:
            return decode_response(ApiKey.SHARE_GROUP_HEARTBEAT, 1, payload[: len(payload) - extra], offset), extra
        except DecodeError:
            continue
    raise DecodeError(f"not a ShareGroupHeartbeat v1 answer: {payload.hex()}")


async def ask(client: RawClient, request: ShareGroupHeartbeatRequest) -> Any:
    await client.send_raw(client.encode(ApiKey.SHARE_GROUP_HEARTBEAT, 1, request)[1])
    payload = await client.receive_frame()
    assert payload is not None, "the server closed the connection"
    answer, _ = lenient(payload)
    assert answer.error_code == 0, answer
    return answer


async def form_share_group(port: int, group: str, size: int, out: list[RawMember]) -> None:
    """`size` members join one by one (epoch 0, client-made member id); after each join the earlier
    members heartbeat once, as a live client would before the next join (the mock fences a member
    whose epoch is two group epochs behind: see probe_fencing). Then their steady-state frames."""
    members = [RawMember(await RawClient.connect("127.0.0.1", port), group) for _ in range(size)]
    for i, m in enumerate(members):
        m.member_id = str(uuid.uuid4())
        m.generation = (await ask(m.client, heartbeat(m.member_id, group, 0, ["bench"]))).member_epoch
        for other in members[:i]:
            other.generation = (
                await ask(other.client, heartbeat(other.member_id, group, other.generation))
            ).member_epoch
    for other in members * 2:  # two more rounds: every member on the last epoch
        other.generation = (await ask(other.client, heartbeat(other.member_id, group, other.generation))).member_epoch
    for m in members:
        _, m.frame = m.client.encode(
            ApiKey.SHARE_GROUP_HEARTBEAT, 1, heartbeat(m.member_id, group, m.generation), correlation_id=7
        )
    out.extend(members)


async def probe_fencing(port: int, size: int = 10) -> int:
    """How many of `size` members that join one after another, then each heartbeat once with the
    epoch of its own join, are fenced (Kafka: none; a member's epoch moves only in its own answers)."""
    clients = [await RawClient.connect("127.0.0.1", port) for _ in range(size)]
    ids, epochs, fenced = [str(uuid.uuid4()) for _ in clients], [], 0
    for client, member_id in zip(clients, ids, strict=True):
        epochs.append((await ask(client, heartbeat(member_id, "probe", 0, ["bench"]))).member_epoch)
    for client, member_id, epoch in zip(clients, ids, epochs, strict=True):
        await client.send_raw(client.encode(ApiKey.SHARE_GROUP_HEARTBEAT, 1, heartbeat(member_id, "probe", epoch))[1])
        payload = await client.receive_frame()
        assert payload is not None, "the server closed the connection"
        fenced += lenient(payload)[0].error_code == ErrorCode.FENCED_MEMBER_EPOCH
    for client in clients:
        await client.aclose()
    return fenced


async def beat_n(
    member: RawMember, n: int, latencies: list[float], errors: list[int], sizes: list[int], answers: list[bytes]
) -> None:
    stream, buffer = member.client.stream, bytearray()
    for _ in range(n):
        sent = time.perf_counter()
        await stream.send_all(member.frame)
        while len(buffer) < 4 or len(buffer) < 4 + struct.unpack_from(">i", buffer)[0]:
            buffer += await stream.receive_some(65536)
        latencies.append(time.perf_counter() - sent)
        size = struct.unpack_from(">i", buffer)[0]
        if error := struct.unpack_from(">h", buffer, 4 + 4 + 1 + 4)[0]:  # size|corr|tags|throttle|error
            errors.append(error)
        sizes.append(size)
        if not answers:
            answers.append(bytes(buffer[4 : 4 + size]))
        del buffer[: 4 + size]


def user_sys_ticks(pid: int) -> tuple[int, int]:
    """utime and stime (clock ticks, all threads): the server's own code apart from the kernel's."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


async def heartbeat_load(server: Running, groups: int, size: int, per_member: int) -> tuple[str, bool, int, int]:
    """(the figures, whether a steady-state answer carried the assignment, bytes after its body,
    fenced members in probe_fencing)"""
    fenced = await probe_fencing(server.port)
    members: list[RawMember] = []
    async with trio.open_nursery() as nursery:
        for g in range(groups):
            nursery.start_soon(form_share_group, server.port, f"hb-{g}", size, members)
    latencies: list[float] = []
    errors: list[int] = []
    sizes: list[int] = []
    answers: list[bytes] = []
    ticks0, began = user_sys_ticks(server.pid), time.perf_counter()
    async with trio.open_nursery() as nursery:
        for m in members:
            nursery.start_soon(beat_n, m, per_member, latencies, errors, sizes, answers)
    wall, ticks1 = time.perf_counter() - began, user_sys_ticks(server.pid)
    user, system = ((b - a) / os.sysconf("SC_CLK_TCK") / len(latencies) * 1e6 for a, b in zip(ticks0, ticks1))
    answer, extra = lenient(answers[0])
    for m in members:
        await m.client.aclose()
    assignment = "null (unchanged)" if answer.assignment is None else "the full assignment"
    figures = (
        f"{len(latencies) / wall:7.0f} req/s   p50 {percentile(latencies, 0.5) * 1000:6.2f} ms   "
        f"p99 {percentile(latencies, 0.99) * 1000:6.2f} ms   server CPU {user + system:5.0f} us/request "
        f"(user {user:3.0f}, sys {system:3.0f})   "
        f"errors {len(errors)}   answer {statistics.mean(sizes):.0f} bytes, assignment: {assignment}"
    )
    return figures, answer.assignment is not None, extra, fenced


def heartbeat_part(name: str, root: str, args: argparse.Namespace) -> None:
    if name == "mock":
        server = start_mock({"bench": 4})
    else:
        baseline = args.baseline if name == "baseline" else None
        profile = args.profile if name == "kgc" else None
        server = start_kgc(tempfile.mkdtemp(dir=root), topics={"bench": 4}, baseline=baseline, profile=profile)
    try:
        load = trio.run(heartbeat_load, server, args.groups, args.members, args.heartbeats)
    finally:
        server.stop()
    figures, with_assignment, extra, fenced = load
    print(f"   {name:8s} {figures}")
    print(f"   {'':8s} 10 members join in turn, then each heartbeats with its join epoch: {fenced} fenced")
    if name == "mock":
        notes = (
            [EVERY_ANSWER] * with_assignment + [TRAILING.format(extra=extra)] * bool(extra) + [FENCING] * bool(fenced)
        )
        for note in notes:
            print(f"      note: {note}")


# -- the run ------------------------------------------------------------------------------------------------
def print_scenarios(names: list[str], rows: dict[str, dict[str, Row]]) -> None:
    for key, title in SCENARIOS.items():
        print(f"  {title}")
        for name in names:
            row = rows[name][key]
            print(f"    {name:8s} {'pass' if row.passed else 'FAIL'}  {row.observed}")
        if rows["kgc"][key].passed and not rows["mock"][key].passed:
            for note in NOTES.get(key, []):
                print(f"      note: {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2,000 scenario records, 20,000 speed records, 1 trial")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--records", type=int, default=100_000, help="records for the speed part")
    parser.add_argument("--groups", type=int, default=20)
    parser.add_argument("--members", type=int, default=10, help="members per heartbeat group")
    parser.add_argument("--heartbeats", type=int, default=100, help="steady-state heartbeats per member")
    parser.add_argument("--parts", default="1,2,3", help="which parts to run (1 scenarios, 2 speed, 3 heartbeats)")
    parser.add_argument("--baseline", metavar="DIR", help="also run the kgc checked out in DIR (A/B)")
    parser.add_argument("--profile", metavar="PATH", help="run this tree's kgc under cProfile in part 3")
    parser.add_argument("--in-process", action="store_true", help="part 3 also times this tree's dispatch()")
    args = parser.parse_args()
    parts = {int(p) for p in args.parts.split(",")}
    count = 2_000 if args.quick else 10_000
    records, trials = (20_000, 1) if args.quick else (args.records, args.trials)
    names = ["kgc", *(["baseline"] if args.baseline else []), "mock"]
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    rows: dict[str, dict[str, Row]] = {}
    speeds: dict[str, dict[int, list[tuple[float, float, int] | None]]] = {}
    with tempfile.TemporaryDirectory(prefix="kgc-share-bench-") as root:
        for name in names if parts & {1, 2} else []:
            main_server, short = start_pair(name, root, args.baseline if name == "baseline" else None)
            try:
                if 1 in parts:
                    rows[name] = run_all(main_server.bootstrap, short.bootstrap, LOCK_MS / 1000, count)
                if 2 in parts:
                    speeds[name] = speed(main_server, records, trials)
            finally:
                main_server.stop()
                short.stop()
        if 1 in parts:
            print(
                f"\n1. scenarios: {count:,} records in (a); main server: lock 30 s, limit 5; "
                f"short: lock {LOCK_MS} ms, limit 2"
            )
            print_scenarios(names, rows)
        if 2 in parts:
            print(
                f"\n2. speed: {records:,} records, 4 partitions, implicit acks, {trials} trial(s), "
                "subscribe -> all seen"
            )
            for n in (1, 3):
                for name in names:
                    print(f"   {n} consumer{'s' if n > 1 else ' '} {name:8s} {describe_speed(speeds[name][n])}")
            print(f"      note: {SCANS}")
            if any(t and t[2] for t in speeds["mock"][3]):
                print("      note: the mock's duplicates: see the note under (g)")
        if 3 in parts:
            total = args.groups * args.members
            print(
                f"\n3. ShareGroupHeartbeat v1, steady state: {total} members, {args.groups} groups, "
                f"{args.heartbeats} each"
            )
            for name in names:
                heartbeat_part(name, root, args)
            if args.profile:
                pstats.Stats(args.profile).sort_stats("tottime").print_stats(40)
            if args.in_process:
                cpu = steady_heartbeat_cpu()
                print(f"   {'kgc in process':16s} dispatch() only, no sockets: CPU {cpu:6.1f} us/heartbeat (best of 9)")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
