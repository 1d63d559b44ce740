"""Consumer-group timings against a real `kgc serve` process.

    .venv/bin/python bench/group_bench.py [--trials 3] [--seconds 5] [--skip-clients] [--skip-heartbeats]

1. Time to a stable group: N = 1, 4, 16, 64 confluent-kafka consumers (librdkafka 2.16, eager
   range/roundrobin, heartbeat.interval.ms=300) subscribe to a 32-partition topic; the clock runs
   from starting the consumers (create + subscribe) until every partition is owned by exactly one
   member and every member's last callback was an assignment (with 64 members, 32 own nothing).
   Run with group.initial.rebalance.delay.ms = 0 (this server's default) and 500 (members that
   arrive together then form one generation; like Kafka, the delay is extended once more when
   members joined during it, so expect ~2 x 500 ms); "generations" is the most assignments one
   member saw. librdkafka may also rejoin by itself once it has the topic's metadata.
2. Leave -> stable: 4 members stable (formed with the 500 ms delay, so in one generation), one
   closes (LeaveGroup v1); time until the other 3 own all 32 partitions. The others only learn of
   the rebalance from their next heartbeat (REBALANCE_IN_PROGRESS), so expect up to one heartbeat
   interval plus a join/sync round. Also: two consumers started 30 ms apart (librdkafka's tests
   0102 and 0113 expect one generation); --mock runs the same on librdkafka's mock cluster.
3. Heartbeats: 1,000 members in 100 groups of 10 over 1,000 loopback connections (raw protocol,
   Heartbeat v3 as librdkafka sends it): latency p50/p99 at a paced load (each member every
   300 ms, ~3,300 requests/s offered; --interval-ms 3000 is Kafka's default, ~330/s) and
   requests/s when every member sends back-to-back.
   The load generator shares the 2 cores with the server, so these figures include its cost.

Targets (brief): N=16 stable <= 0.5 s; leave -> stable <= heartbeat interval + 0.2 s;
heartbeat p99 <= 5 ms at 1,000 members. Prints figures; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from servers import cpu_seconds, start_kgc, start_mock  # noqa: E402

from interop.clients.groups import ConfluentMember, Ownership, close_all  # noqa: E402
from protocol.api import ApiKey  # noqa: E402
from protocol.errors import ErrorCode  # noqa: E402
from protocol.messages.heartbeat import HeartbeatRequest  # noqa: E402
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol  # noqa: E402
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment  # noqa: E402
from tests.integration.raw_client import RawClient  # noqa: E402

PARTITIONS = 32
HEARTBEAT_MS = 300
TIMEOUT_S = 60.0


# -- the server ---------------------------------------------------------------------------------
def start_server(
    data_dir: str, settings: dict[str, object], baseline: str | None = None
) -> tuple[subprocess.Popen, int]:
    server = start_kgc(data_dir, settings=settings, baseline=baseline)
    return server.proc, server.port


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


_MOCK_TOPICS: set[str] = set()


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    if name in _MOCK_TOPICS:
        return
    from confluent_kafka.admin import AdminClient, NewTopic

    # A client per call, dropped at once: a kept one would go on reconnecting to a stopped server.
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(TIMEOUT_S)  # type: ignore[attr-defined]


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.002)


# -- 1 and 2: real consumers ------------------------------------------------------------------------
def settled(ownership: Ownership, members: list[ConfluentMember], topic: str) -> bool:
    """Every partition owned exactly once among `members`, and each member's last callback was an
    assignment (eager: a rebalance in progress starts with revocations)."""
    snap = ownership.snapshot()
    owned = [tp for m in members for tp in snap.get(m.name, ())]
    if sorted(owned) != [(topic, p) for p in range(PARTITIONS)]:
        return False
    return all(m.events and m.events[-1].kind == "assign" for m in members)


def members_for(bootstrap: str, group: str, topic: str, ownership: Ownership, n: int, prefix: str = "m"):
    config = {"heartbeat.interval.ms": HEARTBEAT_MS, "session.timeout.ms": 6000}
    return [
        ConfluentMember(f"{prefix}{i}", bootstrap, group, [topic], ownership, config, poll_timeout=0.01)
        for i in range(n)
    ]


def formation(bootstrap: str, n: int, trial: int, tag: str) -> tuple[float, int]:
    topic, group = f"form-{tag}-{n}-{trial}", f"form-{tag}-{n}-{trial}"
    create_topic(bootstrap, topic, PARTITIONS)
    ownership = Ownership()
    members = members_for(bootstrap, group, topic, ownership, n)
    start = time.monotonic()
    try:
        for m in members:
            m.start()
        wait_for(lambda: settled(ownership, members, topic), TIMEOUT_S, f"{n} members stable")
        elapsed = time.monotonic() - start
        generations = max(m.count("assign") for m in members)
    finally:
        close_all(members)
    return elapsed, generations


def leave_to_stable(bootstrap: str, trial: int) -> tuple[float, float, float, float]:
    """(close() returned, first survivor revoked, last survivor revoked, stable again), seconds after
    close() was called. The revocations mark when each survivor heard of the rebalance (its next
    heartbeat); the rest is JoinGroup + SyncGroup."""
    topic, group = f"leave-{trial}", f"leave-{trial}"
    create_topic(bootstrap, topic, PARTITIONS)
    ownership = Ownership()
    members = members_for(bootstrap, group, topic, ownership, 4)
    try:
        for m in members:
            m.start()
        wait_for(lambda: settled(ownership, members, topic), TIMEOUT_S, "4 members stable")
        start = time.monotonic()
        members[0].close()
        closed = time.monotonic() - start
        rest = members[1:]
        wait_for(
            lambda: settled(ownership, rest, topic) and all(m.count("assign") >= 2 for m in rest),
            TIMEOUT_S,
            "3 members stable after a leave",
        )
        stable = time.monotonic() - start
        heard = [next(e.at for e in m.events if e.kind == "revoke" and e.at >= start) - start for m in rest]
        return closed, min(heard), max(heard), stable
    finally:
        close_all(members)


def describe(values: list[float]) -> str:
    return (
        f"median {statistics.median(values) * 1000:7.1f} ms   min {min(values) * 1000:7.1f}   "
        f"max {max(values) * 1000:7.1f}"
    )


def pair_30ms_apart(bootstrap: str, trial: int, tag: str) -> tuple[float, int]:
    """Two consumers started 30 ms apart (librdkafka's tests 0102 and 0113 expect one generation):
    (seconds to stable, the most assignments one member saw: 1 = one generation)."""
    topic, group = f"pair-{tag}-{trial}", f"pair-{tag}-{trial}"
    create_topic(bootstrap, topic, PARTITIONS)
    ownership = Ownership()
    members = members_for(bootstrap, group, topic, ownership, 2)
    start = time.monotonic()
    try:
        members[0].start()
        time.sleep(0.03)
        members[1].start()
        wait_for(lambda: settled(ownership, members, topic), TIMEOUT_S, "2 members stable")
        elapsed = time.monotonic() - start
        generations = max(m.count("assign") for m in members)
    finally:
        close_all(members)
    return elapsed, generations


def client_benches(
    trials: int,
    delays: tuple[int, ...] = (0, 100, 500),
    sizes: tuple[int, ...] = (1, 4, 16, 64),
    mock: bool = False,
    baseline: str | None = None,
) -> None:
    runs_of: list[tuple[str, object]] = [(f"d{d}", d) for d in delays] + ([("mock", None)] if mock else [])
    for label, delay in runs_of:
        with tempfile.TemporaryDirectory(prefix="kgc-group-bench-") as data:
            if delay is None:  # the mock's admin API cannot create topics: it starts with every name used
                names = [f"form-{label}-{n}-{t}" for n in sizes for t in range(trials)]
                names += [f"pair-{label}-{t}" for t in range(trials)]
                server = start_mock({name: PARTITIONS for name in names})
                proc, bootstrap = server.proc, server.bootstrap
                _MOCK_TOPICS.update(names)
            else:
                proc, port = start_server(data, {"group.initial.rebalance.delay.ms": delay}, baseline)
                bootstrap = f"127.0.0.1:{port}"
            try:
                what = "librdkafka's mock cluster" if delay is None else f"group.initial.rebalance.delay.ms={delay}"
                print(f"\n1. subscribe -> stable group, 32 partitions, {what}")
                for n in sizes:
                    runs = [formation(bootstrap, n, t, f"{label}") for t in range(trials)]
                    times = [r[0] for r in runs]
                    print(f"   N={n:3d}: {describe(times)}   generations {[r[1] for r in runs]}", flush=True)
                runs = [pair_30ms_apart(bootstrap, t, label) for t in range(trials)]
                print(
                    f"   two started 30 ms apart: {describe([r[0] for r in runs])}   generations "
                    f"{[r[1] for r in runs]}",
                    flush=True,
                )
                if delay == 500:  # formation in one generation, so nothing else is rebalancing
                    print(f"\n2. close one of 4 -> the other 3 own everything (heartbeat.interval.ms={HEARTBEAT_MS})")
                    runs = [leave_to_stable(bootstrap, t) for t in range(max(trials, 5))]
                    print(f"   close() returns:       {describe([r[0] for r in runs])}")
                    print(f"   first survivor heard:  {describe([r[1] for r in runs])}")
                    print(f"   last survivor heard:   {describe([r[2] for r in runs])}")
                    print(f"   stable again:          {describe([r[3] for r in runs])}")
            finally:
                stop_server(proc)


# -- 3: heartbeats over the raw protocol -----------------------------------------------------------
SUBSCRIPTION = struct.pack(">hih5si", 0, 1, 5, b"bench", -1)


class RawMember:
    def __init__(self, client: RawClient, group: str) -> None:
        self.client, self.group = client, group
        self.member_id, self.generation = "", -1
        self.frame = b""


async def form_group(port: int, group: str, size: int, out: list[RawMember]) -> None:
    members = [RawMember(await RawClient.connect("127.0.0.1", port), group) for _ in range(size)]

    def join(member: RawMember) -> JoinGroupRequest:
        return JoinGroupRequest(
            group_id=group,
            session_timeout_ms=30000,
            rebalance_timeout_ms=30000,
            member_id=member.member_id,
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
        )

    joined: dict[int, object] = {}

    async def join_one(i: int, member: RawMember) -> None:
        response = await member.client.request(ApiKey.JOIN_GROUP, 5, join(member))
        if response.error_code == ErrorCode.MEMBER_ID_REQUIRED:  # KIP-394: join again with the id
            member.member_id = response.member_id
            response = await member.client.request(ApiKey.JOIN_GROUP, 5, join(member))
        assert response.error_code == ErrorCode.NONE, response
        member.generation = response.generation_id
        joined[i] = response

    # Members that arrive after a join phase completed start another rebalance; everyone then
    # joins again with their ids until one generation holds them all.
    for _ in range(10):
        async with trio.open_nursery() as nursery:
            for i, m in enumerate(members):
                nursery.start_soon(join_one, i, m)
        if len({m.generation for m in members}) == 1:
            break
    else:
        raise SystemExit(f"group {group} did not settle into one generation")
    leader = joined[0].leader  # type: ignore[attr-defined]

    async def sync_one(member: RawMember) -> None:
        assignments = (
            [SyncGroupRequestAssignment(member_id=m.member_id, assignment=b"") for m in members]
            if member.member_id == leader
            else []
        )
        synced = await member.client.request(
            ApiKey.SYNC_GROUP,
            3,
            SyncGroupRequest(
                group_id=group, generation_id=member.generation, member_id=member.member_id, assignments=assignments
            ),
        )
        assert synced.error_code == ErrorCode.NONE, synced

    async with trio.open_nursery() as nursery:
        for m in members:
            nursery.start_soon(sync_one, m)
    for m in members:
        _, m.frame = m.client.encode(
            ApiKey.HEARTBEAT,
            3,
            HeartbeatRequest(group_id=group, generation_id=m.generation, member_id=m.member_id),
            correlation_id=7,
        )
    out.extend(members)


async def beat(
    member: RawMember, until: float, interval: float | None, latencies: list[float], errors: list[int]
) -> None:
    stream = member.client.stream
    buffer = bytearray()
    # Real members heartbeat out of phase with each other; starting them all at once would
    # measure a burst of 1,000 simultaneous requests every interval instead.
    next_at = time.perf_counter() + (random.uniform(0, interval) if interval else 0)
    while True:
        now = time.perf_counter()
        if now >= until:
            return
        if interval is not None and now < next_at:
            await trio.sleep(next_at - now)
        sent = time.perf_counter()
        await stream.send_all(member.frame)
        while True:
            if len(buffer) >= 4:
                size = struct.unpack_from(">i", buffer)[0]
                if len(buffer) >= 4 + size:
                    break
            buffer += await stream.receive_some(65536)
        latencies.append(time.perf_counter() - sent)
        # Heartbeat v3 response: header (correlation id) | throttle_time_ms | error_code
        error = struct.unpack_from(">h", buffer, 4 + 4 + 4)[0]
        if error:
            errors.append(error)
        del buffer[: 4 + size]
        if interval is not None:
            next_at = sent + interval


def _own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def heartbeat_load(port: int, pid: int, groups: int, size: int, seconds: float, interval_ms: int) -> None:
    members: list[RawMember] = []
    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for g in range(groups):
            nursery.start_soon(form_group, port, f"hb-{g}", size, members)
    print(f"\n3. heartbeats: {len(members)} members in {groups} groups formed in {time.perf_counter() - start:.2f} s")
    for label, interval in ((f"paced, every {interval_ms} ms", interval_ms / 1000), ("back-to-back", None)):
        latencies: list[float] = []
        errors: list[int] = []
        cpu0 = cpu_seconds(pid)
        own0 = _own_cpu_seconds()
        began = time.perf_counter()
        until = began + seconds
        async with trio.open_nursery() as nursery:
            for m in members:
                nursery.start_soon(beat, m, until, interval, latencies, errors)
        wall = time.perf_counter() - began
        cpu = cpu_seconds(pid) - cpu0
        own = _own_cpu_seconds() - own0
        print(
            f"   {label:22s}: {len(latencies) / wall:8.0f} req/s   p50 {percentile(latencies, 0.5) * 1000:6.2f} ms   "
            f"p99 {percentile(latencies, 0.99) * 1000:6.2f} ms   max {max(latencies) * 1000:6.1f} ms   "
            f"CPU: server {cpu / wall * 100:3.0f}% load generator {own / wall * 100:3.0f}%   errors {len(errors)}"
        )
        # CPU per request does not depend on how busy the machine is; it bounds req/s per core.
        print(
            f"   {'':22s}  server CPU per heartbeat {cpu / max(1, len(latencies)) * 1e6:6.0f} us "
            f"(~{len(latencies) / cpu if cpu else float('inf'):,.0f} req/s per core)"
        )
    for m in members:
        await m.client.aclose()


def heartbeat_bench(seconds: float, groups: int = 100, size: int = 10, interval_ms: int = HEARTBEAT_MS) -> None:
    with tempfile.TemporaryDirectory(prefix="kgc-group-bench-") as data:
        # Members of a group join together within the initial delay, so each group forms once.
        proc, port = start_server(data, {"group.initial.rebalance.delay.ms": 3000})
        try:
            trio.run(heartbeat_load, port, proc.pid, groups, size, seconds, interval_ms)
        finally:
            stop_server(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each heartbeat phase")
    parser.add_argument("--groups", type=int, default=100, help="heartbeat bench: groups")
    parser.add_argument("--members", type=int, default=10, help="heartbeat bench: members per group")
    parser.add_argument(
        "--interval-ms",
        type=int,
        default=HEARTBEAT_MS,
        help="heartbeat bench: each member's heartbeat interval in the paced phase (Kafka's default is 3000)",
    )
    parser.add_argument(
        "--delays",
        default="0,100,500",
        help="group.initial.rebalance.delay.ms values to form groups with (comma-separated)",
    )
    parser.add_argument("--sizes", default="1,4,16,64", help="group sizes to form (comma-separated)")
    parser.add_argument("--mock", action="store_true", help="also form groups on librdkafka's mock cluster")
    parser.add_argument("--baseline", metavar="DIR", help="run the kgc checked out in DIR instead of this tree")
    parser.add_argument("--skip-clients", action="store_true")
    parser.add_argument("--skip-heartbeats", action="store_true")
    args = parser.parse_args()
    # Other work on the machine shows up in every figure here; say how busy it was.
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    if not args.skip_clients:
        client_benches(
            args.trials,
            tuple(int(d) for d in args.delays.split(",")),
            tuple(int(n) for n in args.sizes.split(",")),
            args.mock,
            args.baseline,
        )
    if not args.skip_heartbeats:
        heartbeat_bench(args.seconds, args.groups, args.members, args.interval_ms)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
